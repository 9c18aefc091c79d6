import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorEnvelopeSchema, meta } from '../../http/wire/envelope.js';
import { validationError } from '../../http/wire/errors.js';
import { loupeScoreOfLangfuse } from '../model/langfuse-score.js';
import { ingestScores, type ScoreStores } from '../service/ingest.js';
import { authorOf } from './routes.js';
import { maxScoresPerRequest } from './schemas.js';

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema };
const tags = ['langfuse'];

const ingestionBody = z.object({
  batch: z
    .array(z.looseObject({ id: z.string().optional(), type: z.string(), body: z.unknown() }))
    .max(maxScoresPerRequest, `at most ${maxScoresPerRequest} events per request`),
  metadata: z.unknown().optional(),
});

const metaSchema = z.object({ requestId: z.string(), timestamp: z.string() });
const ingestionAnswer = z.object({
  successes: z.array(z.object({ id: z.string(), status: z.number().int() })),
  errors: z.array(z.object({ id: z.string(), status: z.number().int(), message: z.string(), error: z.string().optional() })),
  data: z.object({ accepted: z.number().int(), rejected: z.number().int() }),
  meta: metaSchema,
});

/**
 * The Langfuse drop-in for scores (Basic credentials: tenancy/service/auth.ts): the Langfuse SDKs'
 * `score-create` events on /api/public/ingestion, answered 207 per event as Langfuse does (other
 * event types are not taken: traces come over OTLP), and the API's POST /api/public/scores.
 * Both answer the Langfuse fields with the envelope's `data` and `meta` alongside.
 */
export const langfuseScoreRoutes: FastifyPluginAsyncZod<{ stores: ScoreStores }> = async (app, { stores }) => {
  app.post('/ingestion', {
    schema: {
      tags,
      summary: 'Langfuse batch ingestion: score-create events are stored as scores; other event types are answered as not taken',
      body: ingestionBody,
      response: { 207: ingestionAnswer, ...errors },
    },
    handler: async (request, reply) => {
      const events = request.body.batch.map((event, index) => ({ ...event, id: event.id ?? String(index) }));
      const scores = events.filter((event) => event.type === 'score-create');
      const writer = { workspaceId: request.auth.workspaceId, authorId: authorOf(request), defaultSource: 'sdk' as const };
      const result = await ingestScores(
        stores,
        writer,
        scores.map((event) => loupeScoreOfLangfuse(event.body, 'sdk')),
      );
      const failed = new Map<number, string>();
      for (const error of result.errors) {
        if (!failed.has(error.index)) failed.set(error.index, `${error.path.replace(/^scores\.\d+\.?/, 'body.')}: ${error.message}`);
      }
      const successes: { id: string; status: number }[] = [];
      const answerErrors: { id: string; status: number; message: string; error?: string }[] = [];
      scores.forEach((event, index) => {
        const problem = failed.get(index);
        if (problem === undefined) successes.push({ id: event.id, status: 201 });
        else answerErrors.push({ id: event.id, status: 400, message: 'Invalid request data', error: problem });
      });
      for (const event of events) {
        if (event.type !== 'score-create')
          answerErrors.push({
            id: event.id,
            status: 400,
            message: `event type ${event.type} is not taken here: send traces over OpenTelemetry (/api/public/otel)`,
          });
      }
      return reply.code(207).send({
        successes,
        errors: answerErrors,
        data: { accepted: successes.length, rejected: answerErrors.length },
        meta: meta(request),
      });
    },
  });

  app.post('/scores', {
    schema: {
      tags,
      summary: 'Langfuse API: create a score (answers its id)',
      body: z.looseObject({ name: z.unknown() }),
      response: { 200: z.object({ id: z.string(), data: z.object({ id: z.string() }), meta: metaSchema }), ...errors },
    },
    handler: async (request, reply) => {
      const writer = { workspaceId: request.auth.workspaceId, authorId: authorOf(request), defaultSource: 'api' as const };
      const result = await ingestScores(stores, writer, [loupeScoreOfLangfuse(request.body, 'api')]);
      const id = result.ids[0];
      if (!id) {
        const issues = result.errors.map((e) => ({ path: e.path.replace(/^scores\.0/, 'body'), message: e.message }));
        throw validationError(`Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
      }
      return reply.code(200).send({ id, data: { id }, meta: meta(request) });
    },
  });
};
