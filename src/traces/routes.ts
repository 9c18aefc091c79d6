import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Config } from '../config.js';
import type { ClickHouseClient } from '../stores/clickhouse.js';

// Filled in by the trace ingestion work.
export const traceRoutes: FastifyPluginAsyncZod<{ clickhouse: ClickHouseClient; config: Config }> = async () => {};
