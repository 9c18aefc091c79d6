import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { deletedSchema, recordRoute } from '../../http/routes/crud-routes.js';
import { ingestScores, type ScoreStores } from '../service/ingest.js';
import { deleteScore, getScore, listScores } from '../service/reads.js';
import { scoreAnalytics } from '../service/analytics.js';
import { scoreAnalyticsQuery, scoreAnalyticsSchema } from './analytics-schemas.js';
import {
  ingestScoresBodySchema,
  listScoresQuery,
  scoreIngestResultSchema,
  scoreListMetaSchema,
  scoreParams,
  scoreSchema,
} from './schemas.js';

const tags = ['scores'];

/** Who wrote a score: the API key's id, or the bearer token's subject. */
export function authorOf(request: FastifyRequest): string {
  const principal = request.auth.principal;
  return principal.kind === 'apiKey' ? principal.keyId : principal.subject;
}

/** The scores of the caller's workspace: ingest (upsert by id), list, read, delete. */
export const scoreRoutes: FastifyPluginAsyncZod<{ stores: ScoreStores }> = async (app, { stores }) => {
  recordRoute(app, tags, {
    method: 'POST',
    url: '/',
    summary: 'Record one score or up to 1,000 (`{scores: [...]}`); answered per item, re-sent ids correct their score',
    body: ingestScoresBodySchema,
    answer: scoreIngestResultSchema,
    run: (workspaceId, { body }, request) => {
      const items = 'scores' in body && Array.isArray(body.scores) ? body.scores : [body];
      return ingestScores(stores, { workspaceId, authorId: authorOf(request), defaultSource: 'api' }, items);
    },
  });
  recordRoute(app, tags, {
    method: 'GET',
    url: '/',
    readBarrier: 'workspace',
    summary: 'The scores of the workspace, newest first; filters, cursor pages',
    query: listScoresQuery,
    answer: z.array(scoreSchema),
    meta: scoreListMetaSchema,
    run: async (workspaceId, { query }) => {
      const { items, pagination } = await listScores(stores, workspaceId, query);
      return { data: items, meta: { pagination } };
    },
  });
  recordRoute(app, tags, {
    method: 'GET',
    url: '/analytics',
    readBarrier: 'workspace',
    summary: 'Per score name in a window: count, mean, median (numeric), distribution (categorical, boolean) and over time',
    query: scoreAnalyticsQuery,
    answer: scoreAnalyticsSchema,
    run: (workspaceId, { query }) => scoreAnalytics(stores, workspaceId, query),
  });
  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id',
    readBarrier: 'workspace',
    summary: 'One score',
    params: scoreParams,
    answer: scoreSchema,
    run: (workspaceId, { params }) => getScore(stores, workspaceId, params.id),
  });
  recordRoute(app, tags, {
    method: 'DELETE',
    url: '/:id',
    readBarrier: 'workspace',
    summary: 'Delete a score',
    params: scoreParams,
    answer: deletedSchema,
    run: (workspaceId, { params }) => deleteScore(stores, workspaceId, params.id),
  });
};
