import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WriteBatcher } from '../writer/write-batcher.js';

/**
 * The routes that read stored traces (or rewrite them from what they read), by method and
 * route: each first waits for the ingest writes of its workspace answered before it and not yet
 * applied (write-batcher.ts, `readable`), so an answered ingest is readable at once. A route
 * about one trace waits only for that trace's writes. Prompts, keys, prices and the other
 * routes of PostgreSQL never wait. The list (GET /api/traces) does not wait either: it reads
 * those writes' traces with the stored ones (unapplied-pages.ts).
 */
const workspaceReads = new Set([
  'GET /api/traces/stats',
  'GET /api/traces/analytics',
  'GET /api/sessions',
  'GET /api/sessions/:sessionId',
  'GET /api/users',
  'GET /api/users/:userId',
  'POST /api/sql',
  // Usage counts the workspace's traces and spans.
  'GET /api/usage',
  // Filters by session, user or prompt read the trace summaries and spans.
  'GET /api/scores',
  'GET /api/prompt/:id/metrics',
  'GET /api/prompt/:id/compare',
  'GET /api/models/unpriced',
  'POST /api/models/reprice',
  // Adding a span to a dataset reads the span (its trace id is in the body).
  'POST /api/datasets/:id/items/from-span',
  // A run's figures and the comparison of runs read their items' traces.
  'GET /api/datasets/:id/runs/:runId',
  'GET /api/datasets/:id/runs/compare',
]);
const oneTraceReads = new Set([
  'GET /api/traces/:id',
  'GET /api/traces/:id/tree',
  'GET /api/traces/:id/spans/:spanId',
  'DELETE /api/traces/:id',
]);

/** How a route waits for answered writes: for its workspace's, for one trace's, or not at all. */
export function readBarrierOf(method: string, route: string): 'workspace' | 'trace' | undefined {
  const key = `${method} ${route.length > 1 ? route.replace(/\/$/, '') : route}`;
  if (workspaceReads.has(key)) return 'workspace';
  if (oneTraceReads.has(key)) return 'trace';
  return undefined;
}

/** Adds the wait to the authenticated scope, after authentication and validation. */
export function registerReadBarrier(app: FastifyInstance, writer: WriteBatcher): void {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    const barrier = readBarrierOf(request.method, request.routeOptions.url ?? '');
    if (!barrier || !request.auth) return;
    const traceId = barrier === 'trace' ? (request.params as { id?: unknown }).id : undefined;
    await writer.readable(request.auth.workspaceId, typeof traceId === 'string' ? [traceId] : undefined);
  });
}
