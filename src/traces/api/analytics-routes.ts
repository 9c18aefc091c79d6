import type { Config } from '../../config.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { envelope, sendData } from '../../http/wire/envelope.js';
import { analyticsQuerySchema, analyticsResultSchema, statsQuerySchema, statsResultSchema } from '../model/wire/analytics-schemas.js';
import { getAnalytics } from '../query/analytics.js';
import { getStats } from '../query/stats.js';
import { queryLimitsOf } from '../model/query-limits.js';
import { clientErrors, queryTooExpensiveSchema } from './route-errors.js';
import type { TraceScores } from '../../contract/trace-scores.js';

const errors = clientErrors;
const tags = ['traces'];

/** Aggregates over the workspace's deduplicated traces; every figure is computed in ClickHouse. */
export const analyticsRoutes: FastifyPluginAsyncZod<{
  clickhouse: ClickHouseClient;
  config: Config;
  /** The score averages each stats group carries and the groups by score (the scores feature); absent, neither. */
  scores?: TraceScores;
}> = async (app, { clickhouse, config, scores }) => {
  const limits = queryLimitsOf(config);
  app.get('/stats', {
    config: { readBarrier: 'workspace' },
    schema: {
      summary:
        'Trace, span, error, token, cost, latency and score figures grouped by model, provider, kind, source, user, session, tag, name or score (top groups)',
      querystring: statsQuerySchema,
      response: { 200: envelope(statsResultSchema), ...errors, 422: queryTooExpensiveSchema },
      tags,
    },
    handler: async (request, reply) =>
      sendData(request, reply, await getStats(clickhouse, request.auth.workspaceId, request.query, limits, scores)),
  });

  app.get('/analytics', {
    config: { readBarrier: 'workspace' },
    schema: {
      summary: 'Totals, latency percentiles, cost breakdown, usage over time, cost efficiency and budget',
      querystring: analyticsQuerySchema,
      response: { 200: envelope(analyticsResultSchema), ...errors, 422: queryTooExpensiveSchema },
      tags,
    },
    handler: async (request, reply) =>
      sendData(request, reply, await getAnalytics(clickhouse, request.auth.workspaceId, request.query, Date.now(), limits)),
  });
};
