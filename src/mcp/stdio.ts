import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { AppError } from '../http/wire/errors.js';
import { LoupeApi, LoupeApiError, queryString, type SendApiRequest } from './loupe-api.js';
import { createMcpServer } from './tools.js';

/** Where `npx loupe mcp` reads: a running Loupe service and the credential to read it with. */
export interface RemoteLoupe {
  baseUrl: string;
  apiKey: string | undefined;
  /** For an organization- or user-scoped key: the workspace to read (x-workspace-id). */
  workspaceId?: string | undefined;
  /** For a user-scoped key: its organization (x-organization-id). */
  organizationId?: string | undefined;
}

/** A request that gets no answer in this time fails the tool call instead of hanging the agent. */
const requestTimeoutMs = 60_000;

/** The tools' API over the network: Loupe's REST API at `baseUrl`, with the key's headers. */
export function remoteApi(remote: RemoteLoupe): LoupeApi {
  if (!remote.apiKey) throw new AppError('VALIDATION_ERROR', 'Set LOUPE_API_KEY to a key of the workspace to read');
  const headers: Record<string, string> = { 'x-api-key': remote.apiKey };
  if (remote.workspaceId) headers['x-workspace-id'] = remote.workspaceId;
  if (remote.organizationId) headers['x-organization-id'] = remote.organizationId;
  // A base with a path (https://host/loupe) keeps it.
  const base = remote.baseUrl.replace(/\/+$/, '');
  const send: SendApiRequest = async ({ method, path, query, body }) => {
    let response: Response;
    try {
      response = await fetch(`${base}${path}${queryString(query)}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new LoupeApiError(503, 'SERVICE_UNAVAILABLE', `Cannot reach Loupe at ${base} (LOUPE_URL): ${cause}`);
    }
    return { status: response.status, body: await response.text() };
  };
  return new LoupeApi(send);
}

/**
 * `npx loupe mcp`: the MCP server on stdin and stdout (stdout carries the protocol alone),
 * reading a remote Loupe. Resolves once the client closes stdin.
 */
export async function serveMcpOverStdio(remote: RemoteLoupe): Promise<void> {
  const server = createMcpServer(remoteApi(remote));
  const closed = new Promise<void>((resolve) => process.stdin.once('end', resolve));
  await server.connect(new StdioServerTransport());
  await closed;
  await server.close();
}
