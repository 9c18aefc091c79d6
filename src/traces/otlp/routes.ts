import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Config } from '../../config.js';
import type { ClickHouseClient } from '../../stores/clickhouse.js';

// Filled in by the OTLP bridge work.
export const otlpRoutes: FastifyPluginAsyncZod<{ clickhouse: ClickHouseClient; config: Config }> = async () => {};
