import type { FastifyInstance } from 'fastify';
import type { ServerCondition } from '../../stores/postgres-restarts.js';
import { sendError } from './error-handler.js';
import { AppError } from '../wire/errors.js';

/**
 * A store known to be down (docs/decisions/091-store-outages.md): why, and when to try again.
 * While the embedded PostgreSQL is restarting, every API request answers 503 at once with
 * `Retry-After`, instead of waiting for connections that cannot succeed; `/healthz` names it.
 */
export interface Outage {
  reason: string;
  retryAfterSeconds: number;
}

/** The outage the embedded PostgreSQL's condition (postgres-restarts.ts) means, if any. */
export function postgresOutage(condition: ServerCondition, now = Date.now()): Outage | undefined {
  if (condition.state === 'up') return undefined;
  if (condition.state === 'down') return { reason: `postgres: ${condition.reason}`, retryAfterSeconds: 60 };
  const dueIn = Math.max(0, Math.ceil((condition.nextAttemptAt - now) / 1000));
  return {
    reason: `postgres: ${condition.reason}; restarting it (attempt ${condition.attempt} of ${condition.attempts})`,
    retryAfterSeconds: dueIn + 2,
  };
}

export function outageError(outage: Outage): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'A data store is unavailable; retry shortly',
    { reason: outage.reason },
    { 'retry-after': String(outage.retryAfterSeconds) },
  );
}

/** Every `/api` request (all read PostgreSQL: keys, rate limits) answers 503 at once while `outage` names one. */
export function registerOutageGate(app: FastifyInstance, outage: () => Outage | undefined): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/api/')) return;
    const now = outage();
    if (now) return sendError(request, reply, outageError(now));
  });
}
