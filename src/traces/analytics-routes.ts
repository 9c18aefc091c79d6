import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ClickHouseClient } from '../stores/clickhouse.js';
import { envelope, errorEnvelopeSchema, sendData } from '../http/envelope.js';
import { analyticsQuerySchema, analyticsResultSchema, statsQuerySchema, statsResultSchema } from './analytics-schemas.js';
import { getAnalytics } from './analytics.js';
import { getStats } from './stats.js';

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema };
const tags = ['traces'];

/** Aggregates over the workspace's deduplicated traces; every figure is computed in ClickHouse. */
export const analyticsRoutes: FastifyPluginAsyncZod<{ clickhouse: ClickHouseClient }> = async (app, { clickhouse }) => {
  app.get('/stats', {
    schema: {
      summary: 'Trace, span, error, token, cost and latency figures grouped by model, provider, kind or source',
      querystring: statsQuerySchema,
      response: { 200: envelope(statsResultSchema), ...errors },
      tags,
    },
    handler: async (request, reply) => sendData(request, reply, await getStats(clickhouse, request.auth.workspaceId, request.query)),
  });

  app.get('/analytics', {
    schema: {
      summary: 'Totals, latency percentiles, cost breakdown, usage over time, cost efficiency and budget',
      querystring: analyticsQuerySchema,
      response: { 200: envelope(analyticsResultSchema), ...errors },
      tags,
    },
    handler: async (request, reply) => sendData(request, reply, await getAnalytics(clickhouse, request.auth.workspaceId, request.query)),
  });
};
