import { z } from 'zod';
import { errorEnvelopeSchema } from './envelope.js';

/**
 * The finishing pass over the document @fastify/swagger generates from the routes' zod
 * schemas: what is true of whole groups of routes is written here once, so the document
 * states every answer the service can give and no route can forget one.
 *
 * - paths as served, without a trailing slash (`/api/traces`, never `/api/traces/`);
 * - one `operationId` per operation (given by the route, else derived from method and path);
 * - every error status an operation can answer, each with the one shared envelope schema
 *   (`#/components/schemas/ErrorEnvelope`): 400 (bad input, headers or URL), 401 and 429
 *   (credentials and limits), 403 (a workspace outside the credential's reach), 404 (a path
 *   parameter naming nothing), 413 and 415 (bodies), 500, 503 (a store unavailable);
 * - the `x-workspace-id` / `x-organization-id` headers, and the `RateLimit-*` and
 *   `Retry-After` response headers;
 * - the OTLP receiver's request and response bodies, JSON and protobuf.
 */

export type OpenApiDocument = {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown>; [key: string]: unknown };
  [key: string]: unknown;
};
type Operation = {
  operationId?: string;
  parameters?: Array<{ in: string; name: string; [key: string]: unknown }>;
  requestBody?: { content: Record<string, unknown>; required?: boolean };
  responses?: Record<string, { description?: string; content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }>;
  security?: unknown[];
  [key: string]: unknown;
};

const envelopeRef = { $ref: '#/components/schemas/ErrorEnvelope' };

const statusText: Record<string, string> = {
  '400': 'Invalid input: body, query, path parameter or header; `error.details.issues` names each bad field',
  '401': 'Missing, unknown or revoked credential',
  '403': 'The workspace or organization is outside the credential’s reach',
  '404': 'Nothing with that id in the workspace',
  '409': 'Conflicts with what exists',
  '413': 'Body larger than the limit (after decompression)',
  '415': 'Content-Type or Content-Encoding not supported',
  '422': 'Query over a configured time, memory or size limit',
  '429': 'Over the organization’s rate limit, or too many failed authentications from this address',
  '500': 'Internal error; the message says nothing but the request id',
  '503': 'A data store is unavailable, or too many exports are in flight; retry after Retry-After',
};

const integerHeader = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });
const rateLimitHeaders = {
  'RateLimit-Limit': integerHeader('Requests allowed in the tighter of the minute and day windows'),
  'RateLimit-Remaining': integerHeader('Requests left in that window'),
  'RateLimit-Reset': integerHeader('Seconds until that window resets'),
};
const retryAfter = { 'Retry-After': integerHeader('Seconds to wait before retrying') };

const uuidHeader = (name: string, description: string) => ({
  in: 'header',
  name,
  required: false,
  description,
  schema: { type: 'string', format: 'uuid' },
});
const tenancyHeaders = [
  uuidHeader(
    'x-workspace-id',
    'The workspace to work in: required for organization- and user-scoped keys and bearer tokens; with a workspace key it must name the key’s own',
  ),
  uuidHeader(
    'x-organization-id',
    'The organization: required for user-scoped keys and bearer tokens; otherwise it must name the credential’s own',
  ),
];

const otlpJsonRequest = {
  type: 'object',
  description: 'An OTLP ExportTraceServiceRequest in the protobuf JSON mapping (ids in hex). Nested at most 128 levels.',
  properties: { resourceSpans: { type: 'array', items: { type: 'object' } } },
  additionalProperties: false,
};
const protobufBody = { schema: { type: 'string', format: 'binary' } };

function operationIdOf(method: string, path: string): string {
  const words = [
    method.toLowerCase(),
    ...path
      .split('/')
      .filter(Boolean)
      .map((p) => p.replace(/^\{(.*)\}$/, 'by-$1')),
  ];
  return words
    .flatMap((w) => w.split(/[^A-Za-z0-9]+/).filter(Boolean))
    .map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1)))
    .join('');
}

/** Which answers an operation can give beyond what its route declares. */
function statusesOf(method: string, path: string, operation: Operation): string[] {
  const statuses = ['500', '503'];
  if (path === '/healthz') return statuses;
  statuses.push('400', '401', '429');
  if (!path.startsWith('/api/admin')) statuses.push('403');
  if (path.includes('{')) statuses.push('404');
  if (operation.requestBody || ['post', 'put', 'patch'].includes(method)) statuses.push('413', '415');
  return statuses;
}

export function finishDocument(generated: OpenApiDocument): OpenApiDocument {
  const document = structuredClone(generated);
  const paths: OpenApiDocument['paths'] = {};
  const { $schema: _drop, ...envelope } = z.toJSONSchema(errorEnvelopeSchema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ErrorEnvelope: envelope } };
  const seen = new Set<string>();

  for (const [rawPath, operations] of Object.entries(generated.paths)) {
    const path = rawPath.length > 1 ? rawPath.replace(/\/$/, '') : rawPath;
    for (const [method, original] of Object.entries(operations)) {
      const operation: Operation = structuredClone(original);
      operation.operationId ??= operationIdOf(method, path);
      if (seen.has(operation.operationId)) throw new Error(`two operations are named ${operation.operationId}`);
      seen.add(operation.operationId);
      const responses = (operation.responses ??= {});
      const authenticated = path.startsWith('/api/') && !path.startsWith('/api/admin');
      const otlp = path.startsWith('/api/traces/otlp');

      if (otlp) {
        operation.requestBody = {
          required: true,
          content: {
            'application/json': { schema: otlpJsonRequest },
            'application/x-protobuf': protobufBody,
            'application/protobuf': protobufBody,
          },
        };
        const ok = responses['200'];
        if (ok?.content) ok.content['application/x-protobuf'] = protobufBody;
      }
      if (authenticated) {
        const names = new Set((operation.parameters ?? []).map((p) => `${p.in}:${p.name}`));
        operation.parameters = [...(operation.parameters ?? []), ...tenancyHeaders.filter((h) => !names.has(`header:${h.name}`))];
      }
      for (const status of statusesOf(method, path, operation)) responses[status] ??= { description: statusText[status] ?? 'Error' };
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 400) {
          // A route's own description (what its 409 or 422 means there) wins over the general one.
          if (!response.description || response.description === 'Default Response') response.description = statusText[status] ?? 'Error';
          response.content = { 'application/json': { schema: envelopeRef } };
        }
        if (authenticated) response.headers = { ...rateLimitHeaders, ...response.headers };
        if (status === '429' || status === '503') response.headers = { ...response.headers, ...retryAfter };
      }
      (paths[path] ??= {})[method] = operation;
    }
  }
  document.paths = paths;
  return document;
}
