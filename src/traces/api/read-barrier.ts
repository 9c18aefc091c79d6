import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {} from '../../http/requests/read-barrier.js';

/** A writer whose answered writes reads wait for (write-batcher.ts, `readable`): the trace writer, the score writer. */
export interface AwaitedWriter {
  readable(workspaceId: string, traceIds?: readonly string[]): Promise<void> | undefined;
}

/**
 * Adds to the authenticated scope, after authentication and validation, the wait each route
 * declares (`config.readBarrier`, http/read-barrier.ts): for the workspace's answered writes not
 * yet applied (write-batcher.ts, `readable`), or for those of the one trace the route names, of
 * every writer given (spans and their summaries, scores).
 */
export function registerReadBarrier(app: FastifyInstance, writers: readonly AwaitedWriter[]): void {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    const barrier = request.routeOptions.config.readBarrier;
    if (!barrier || !request.auth) return;
    const traceId = barrier === 'trace' ? (request.params as { id?: unknown }).id : undefined;
    const traceIds = typeof traceId === 'string' ? [traceId] : undefined;
    const waits = writers.map((writer) => writer.readable(request.auth.workspaceId, traceIds)).filter((wait) => wait !== undefined);
    if (waits.length > 0) await Promise.all(waits);
  });
}
