/**
 * How a route that reads stored traces or scores (or rewrites them from what it reads) waits for
 * the ingest writes (spans, scores) answered before it and not yet applied, so an answered
 * ingest is readable at once: `workspace`, for every such write of its workspace; `trace`, for those of the trace its
 * `:id` names. A route declares it beside itself (`config: { readBarrier: 'workspace' }`); one
 * without it never waits (prompts, keys, prices, the trace list: it reads unapplied writes with
 * the stored ones). The traces feature adds the wait (src/traces/api/read-barrier.ts).
 */
export type ReadBarrier = 'workspace' | 'trace';

declare module 'fastify' {
  interface FastifyContextConfig {
    readBarrier?: ReadBarrier;
  }
}
