import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {} from '../../http/requests/read-barrier.js';
import type { WriteBatcher } from '../writer/write-batcher.js';

/**
 * Adds to the authenticated scope, after authentication and validation, the wait each route
 * declares (`config.readBarrier`, http/requests/read-barrier.ts): for the workspace's answered writes not
 * yet applied (write-batcher.ts, `readable`), or for those of the one trace the route names.
 */
export function registerReadBarrier(app: FastifyInstance, writer: WriteBatcher): void {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    const barrier = request.routeOptions.config.readBarrier;
    if (!barrier || !request.auth) return;
    const traceId = barrier === 'trace' ? (request.params as { id?: unknown }).id : undefined;
    await writer.readable(request.auth.workspaceId, typeof traceId === 'string' ? [traceId] : undefined);
  });
}
