import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ClickHouseClient } from '../stores/clickhouse.js';
import type { Sql } from '../stores/postgres.js';
import { envelope, errorEnvelopeSchema, sendData } from './envelope.js';
import { AppError } from './errors.js';

const healthSchema = z.object({ status: z.literal('ok'), postgres: z.literal('ok'), clickhouse: z.literal('ok') });

async function check(probe: () => Promise<unknown>): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch {
    return false;
  }
}

export const healthRoutes: FastifyPluginAsyncZod<{ sql: Sql; clickhouse: ClickHouseClient }> = async (app, { sql, clickhouse }) => {
  app.get('/healthz', {
    schema: { tags: ['health'], security: [], response: { 200: envelope(healthSchema), 503: errorEnvelopeSchema } },
    handler: async (request, reply) => {
      const [postgres, ch] = await Promise.all([
        check(() => sql`select 1`),
        check(async () => {
          const result = await clickhouse.ping();
          if (!result.success) throw new Error('ping failed');
        }),
      ]);
      if (!postgres || !ch) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'A data store does not answer',
          { postgres: postgres ? 'ok' : 'unavailable', clickhouse: ch ? 'ok' : 'unavailable' },
          { 'retry-after': '5' },
        );
      }
      return sendData(request, reply, { status: 'ok' as const, postgres: 'ok' as const, clickhouse: 'ok' as const });
    },
  });
};
