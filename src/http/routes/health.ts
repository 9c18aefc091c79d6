import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import { envelope, errorEnvelopeSchema, sendData } from '../wire/envelope.js';
import { AppError } from '../wire/errors.js';
import type { Outage } from '../requests/outage.js';

const healthSchema = z.object({ status: z.literal('ok'), postgres: z.literal('ok'), clickhouse: z.literal('ok'), ingest: z.literal('ok') });

/** Each store check answers within this, so `/healthz` always answers within a second. */
export const storeCheckTimeoutMs = 600;

export interface HealthSources {
  sql: Sql;
  clickhouse: ClickHouseClient;
  /** A store known to be down without asking it (the embedded PostgreSQL restarting). */
  outage?: () => Outage | undefined;
  /** Why ingest cannot store what it takes (the disk is full), if it cannot. */
  ingestTrouble?: () => string | undefined;
}

/** Undefined when the probe answered in time, else why not. */
async function check(probe: () => Promise<unknown>): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      probe().then(() => undefined),
      new Promise<string>(
        (resolve) => (timer = setTimeout(() => resolve(`no answer within ${storeCheckTimeoutMs} ms`), storeCheckTimeoutMs)),
      ),
    ]);
  } catch (error) {
    return (error as { code?: string }).code ?? 'does not answer';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /healthz` (docs/decisions/091-store-outages.md): 200 `ok` when both stores answer and
 * ingest can store what it takes; otherwise 503 with `Retry-After` and, in the details, `status`
 * (`unavailable`: a store does not answer; `degraded`: the stores answer but ingest cannot
 * store, the disk being full), each part's state and the reasons. A load balancer takes such a
 * replica out of rotation until it is well again; nothing needs restarting.
 */
export const healthRoutes: FastifyPluginAsyncZod<HealthSources> = async (app, sources) => {
  app.get('/healthz', {
    schema: { tags: ['health'], security: [], response: { 200: envelope(healthSchema), 503: errorEnvelopeSchema } },
    handler: async (request, reply) => {
      const known = sources.outage?.();
      const [postgres, clickhouse] = await Promise.all([
        known ? Promise.resolve(known.reason) : check(() => sources.sql`select 1`).then((why) => why && `postgres: ${why}`),
        check(async () => {
          const result = await sources.clickhouse.ping();
          if (!result.success) throw result.error;
        }).then((why) => why && `clickhouse: ${why}`),
      ]);
      const ingest = sources.ingestTrouble?.();
      const reasons = [postgres, clickhouse, ingest].filter((reason): reason is string => reason !== undefined);
      if (reasons.length > 0) {
        const status = postgres || clickhouse ? 'unavailable' : 'degraded';
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          `The service is ${status}: ${reasons.join('; ')}`,
          {
            status,
            postgres: postgres ? 'unavailable' : 'ok',
            clickhouse: clickhouse ? 'unavailable' : 'ok',
            ingest: ingest ? 'degraded' : 'ok',
            reasons,
          },
          { 'retry-after': String(known?.retryAfterSeconds ?? 5) },
        );
      }
      return sendData(request, reply, { status: 'ok' as const, postgres: 'ok' as const, clickhouse: 'ok' as const, ingest: 'ok' as const });
    },
  });
};
