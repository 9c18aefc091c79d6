import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { z } from 'zod';
import { errorEnvelopeSchema } from '../http/wire/envelope.js';
import { LoupeApi, queryString, type SendApiRequest } from './loupe-api.js';
import { createMcpServer } from './tools.js';

/** One in-process request to the app's own REST API (`app.inject`). */
export type InjectApiRequest = (options: {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  payload?: string;
  remoteAddress: string;
}) => Promise<{ statusCode: number; body: string }>;

/** The headers that name the caller and its workspace: the tools' API calls carry exactly these. */
const credentialHeaders = ['x-api-key', 'authorization', 'x-workspace-id', 'x-organization-id'] as const;

/**
 * The tools' API, sent in-process with the credential of the /mcp request: each call is
 * authenticated again by the same code as any request (a revoked key stops mid-session), so
 * the workspace is always the one the caller's credential resolves to.
 */
export function inProcessApi(inject: InjectApiRequest, request: FastifyRequest): LoupeApi {
  const headers: Record<string, string> = { 'x-request-id': request.id };
  for (const name of credentialHeaders) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const send: SendApiRequest = async ({ method, path, query, body }) => {
    const response = await inject({
      method,
      url: `${path}${queryString(query)}`,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      remoteAddress: request.ip,
    });
    return { status: response.statusCode, body: response.body };
  };
  return new LoupeApi(send);
}

const jsonRpcId = z.union([z.string(), z.number().int()]);
const jsonRpcError = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });

/** A JSON-RPC 2.0 message of MCP: a request, a notification or a response. The SDK checks each kind further. */
const jsonRpcMessage = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId.optional(),
    method: z.string().min(1).max(200).optional(),
    params: z.record(z.string(), z.unknown()).optional(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: jsonRpcError.optional(),
  })
  .strict();

/** The MCP SDK's own bound on a batch. */
const maxBatch = 100;
export const mcpBodySchema = z
  .union([jsonRpcMessage, z.array(jsonRpcMessage).min(1).max(maxBatch)])
  .describe('One JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them');

const jsonRpcResponse = z.object({
  jsonrpc: z.literal('2.0'),
  id: jsonRpcId.nullable(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: jsonRpcError.optional(),
});
/** What the MCP SDK answers to a request its transport refuses (no Accept of JSON and event streams, an unknown protocol version). */
const transportError = jsonRpcResponse.describe('A JSON-RPC error of the MCP transport');

/**
 * POST /mcp: Loupe's MCP server over streamable HTTP, stateless (a server and a transport per
 * request, answers as JSON, no server-sent event stream). Inside the authenticated scope, so
 * it takes the same credentials as the REST API and counts against the same rate limit.
 */
export const mcpRoutes: FastifyPluginAsyncZod<{ inject: InjectApiRequest }> = async (app, { inject }) => {
  app.post('/', {
    schema: {
      summary:
        'The MCP server (Model Context Protocol, streamable HTTP, stateless): tools that read traces, sessions, figures, SQL, prompts, scores and experiments',
      description:
        'JSON-RPC 2.0 messages of MCP. Send `Accept: application/json, text/event-stream`; answers come as JSON. Tools, their inputs and the agent configuration: README, section "MCP".',
      body: mcpBodySchema,
      response: {
        200: z.union([jsonRpcResponse, z.array(jsonRpcResponse)]).describe('The JSON-RPC answers of the requests sent'),
        202: z.null().describe('Only notifications or responses were sent: nothing to answer'),
        400: z.union([errorEnvelopeSchema, transportError]),
        401: errorEnvelopeSchema,
        403: errorEnvelopeSchema,
        406: transportError,
        413: errorEnvelopeSchema,
        415: errorEnvelopeSchema,
        429: errorEnvelopeSchema,
      },
      tags: ['mcp'],
    },
    handler: async (request, reply) => {
      const server = createMcpServer(inProcessApi(inject, request));
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      try {
        const headers = new Headers();
        for (const name of ['accept', 'content-type', 'mcp-protocol-version']) {
          const value = request.headers[name];
          if (typeof value === 'string') headers.set(name, value);
        }
        const response = await transport.handleRequest(new Request('http://loupe.invalid/mcp', { method: 'POST', headers }), {
          parsedBody: request.body,
        });
        const text = await response.text();
        // The transport's statuses are the ones declared above (200, 202, 400, 406).
        reply.code(response.status as 200);
        const type = response.headers.get('content-type');
        if (type) reply.header('content-type', type);
        // A JSON string is sent as it is, past the response schema's serializer.
        return reply.send((text === '' ? undefined : text) as unknown as null);
      } finally {
        await server.close();
      }
    },
  });

  // Stateless: no event stream to open (GET) and no session to end (DELETE). The protocol
  // asks for 405 then; clients go on with POST alone.
  const notAllowed = {
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; POST JSON-RPC messages to /mcp' },
    id: null,
  };
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/',
      schema: { hide: true },
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(notAllowed),
    });
  }
};
