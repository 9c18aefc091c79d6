import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Sql } from '../stores/postgres.js';

// Filled in by the prompt versioning work.
export const promptRoutes: FastifyPluginAsyncZod<{ sql: Sql }> = async () => {};
