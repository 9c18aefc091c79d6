import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Config } from '../config.js';
import type { ClickHouseClient } from '../stores/clickhouse.js';

// Filled in by the stats and analytics work: GET /api/traces/stats and /api/traces/analytics.
export const analyticsRoutes: FastifyPluginAsyncZod<{ clickhouse: ClickHouseClient; config: Config }> = async () => {};
