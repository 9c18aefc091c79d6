import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
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

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const tags = ['scores'];

/** Who wrote a score: the API key's id, or the bearer token's subject. */
export function authorOf(request: FastifyRequest): string {
  const principal = request.auth.principal;
  return principal.kind === 'apiKey' ? principal.keyId : principal.subject;
}

/** The scores of the caller's workspace: ingest (upsert by id), list, read, delete. */
export const scoreRoutes: FastifyPluginAsyncZod<{ stores: ScoreStores }> = async (app, { stores }) => {
  app.post('/', {
    schema: {
      tags,
      summary: 'Record one score or up to 1,000 (`{scores: [...]}`); answered per item, re-sent ids correct their score',
      body: ingestScoresBodySchema,
      response: { 200: envelope(scoreIngestResultSchema), ...errors },
    },
    handler: async (request, reply) => {
      const body = request.body;
      const items = 'scores' in body && Array.isArray(body.scores) ? body.scores : [body];
      const writer = { workspaceId: request.auth.workspaceId, authorId: authorOf(request), defaultSource: 'api' as const };
      return sendData(request, reply, await ingestScores(stores, writer, items));
    },
  });

  app.get('/', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary: 'The scores of the workspace, newest first; filters, cursor pages',
      querystring: listScoresQuery,
      response: { 200: envelope(z.array(scoreSchema), scoreListMetaSchema), ...errors },
    },
    handler: async (request, reply) => {
      const { items, pagination } = await listScores(stores, request.auth.workspaceId, request.query);
      return sendData(request, reply, items, { meta: { pagination } });
    },
  });

  app.get('/analytics', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary: 'Per score name in a window: count, mean, median (numeric), distribution (categorical, boolean) and over time',
      querystring: scoreAnalyticsQuery,
      response: { 200: envelope(scoreAnalyticsSchema), ...errors },
    },
    handler: async (request, reply) => sendData(request, reply, await scoreAnalytics(stores, request.auth.workspaceId, request.query)),
  });

  app.get('/:id', {
    config: { readBarrier: 'workspace' },
    schema: { tags, summary: 'One score', params: scoreParams, response: { 200: envelope(scoreSchema), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await getScore(stores, request.auth.workspaceId, request.params.id)),
  });

  app.delete('/:id', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary: 'Delete a score',
      params: scoreParams,
      response: { 200: envelope(z.object({ id: z.string(), deleted: z.literal(true) })), ...errors },
    },
    handler: async (request, reply) => sendData(request, reply, await deleteScore(stores, request.auth.workspaceId, request.params.id)),
  });
};
