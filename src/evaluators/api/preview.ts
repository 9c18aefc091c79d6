import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { EvaluationTarget, EvaluationTraces } from '../../contract/evaluation-targets.js';
import type { CheckEvaluationScore } from '../../contract/evaluation-scores.js';
import { templateVariables } from '../../contract/index.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import { AppError, notFound, validationError } from '../../http/wire/errors.js';
import type { StoredEvaluator } from '../tables/evaluators-table.js';
import { readTargetField } from '../model/target-fields.js';
import { evaluateTarget, scoreValueOf, type EvaluateDeps } from '../service/evaluate.js';
import { checkReferences, type EvaluatorDeps } from '../service/evaluators.js';
import { createEvaluatorBody, type CreateEvaluator } from './schemas.js';

/**
 * `POST /api/evaluators/preview`: runs an evaluator definition once on a chosen trace (or one of
 * its spans) with the evaluators' own code, and answers the score it would give. Nothing is
 * stored: no evaluator, job or score.
 */

/** A trace or span id as stored (a wrong one simply finds nothing). */
const idSchema = z.string().min(1).max(128);

export const previewEvaluatorBody = createEvaluatorBody.safeExtend({
  traceId: idSchema,
  spanId: idSchema.optional().meta({ description: "A span of the trace to judge instead of the trace's root span" }),
});
type PreviewEvaluator = z.infer<typeof previewEvaluatorBody>;

export const evaluatorPreviewSchema = z.object({
  name: z.string(),
  dataType: z.enum(['numeric', 'boolean']),
  value: z.number(),
  stringValue: z.string().nullable().meta({ description: '`true` / `false` for a boolean score, else null' }),
  comment: z.string(),
});
type EvaluatorPreview = z.infer<typeof evaluatorPreviewSchema>;

export interface PreviewDeps extends EvaluateDeps, EvaluatorDeps {
  traces: EvaluationTraces;
  /** The score checked against its config as the store checks the worker's. */
  checkScore: CheckEvaluationScore;
}

/** The judge prompt's variables the mapping leaves out, and mapped fields the target lacks. */
async function missingVariables(deps: PreviewDeps, workspaceId: string, body: CreateEvaluator, target: EvaluationTarget) {
  if (!body.judge) return [];
  const prompt = await deps.prompts.resolve(workspaceId, body.judge.prompt);
  const used = prompt ? [prompt.systemPrompt, prompt.humanPrompt ?? ''].flatMap(templateVariables) : [];
  const mapped = body.judge.variables;
  return [
    ...[...new Set(used)]
      .filter((name) => !Object.hasOwn(mapped, name))
      .map((name) => ({ path: `judge.variables.${name}`, message: 'is a variable of the judge prompt that maps no field' })),
    ...Object.entries(mapped)
      .filter(([, field]) => readTargetField(target, field) === undefined)
      .map(([name, field]) => ({ path: `judge.variables.${name}`, message: `maps ${field}, which this target does not have` })),
  ];
}

async function previewEvaluator(deps: PreviewDeps, workspaceId: string, body: PreviewEvaluator): Promise<EvaluatorPreview> {
  const { traceId, spanId, ...definition } = body;
  await checkReferences(deps, workspaceId, definition);
  const target =
    spanId === undefined ? await deps.traces.readTrace(workspaceId, traceId) : await deps.traces.readSpan(workspaceId, traceId, spanId);
  if (!target) throw notFound(spanId === undefined ? 'Trace' : 'Span', { traceId, ...(spanId !== undefined && { spanId }) });
  const missing = await missingVariables(deps, workspaceId, definition, target);
  if (missing.length > 0) throw validationError(`${missing[0]!.path} ${missing[0]!.message}`, missing);

  const now = new Date().toISOString();
  const evaluator: StoredEvaluator = {
    ...definition,
    id: 'preview',
    workspaceId,
    version: 0,
    status: 'paused',
    createdAt: now,
    updatedAt: now,
  };
  const outcome = await evaluateTarget(deps, evaluator, target, 'preview');
  if (!outcome.ok && 'deferMs' in outcome) {
    const seconds = Math.max(1, Math.ceil(outcome.deferMs / 1000));
    throw new AppError(
      'RATE_LIMITED',
      "The model connection's requests per minute are used up: try again later",
      { limit: 'requestsPerMinute', retryAfterSeconds: seconds },
      { 'retry-after': String(seconds) },
    );
  }
  if (!outcome.ok)
    throw new AppError('MODEL_ERROR', `The evaluation failed: ${outcome.error}`, { transient: outcome.transient, reason: outcome.error });
  // The worker's score as its store would take it, or the refusal that would fail its job.
  const checked = await deps.checkScore(workspaceId, {
    name: body.score.name,
    dataType: body.score.dataType,
    value: scoreValueOf(body.score.dataType, outcome.value),
  });
  if ('error' in checked) {
    const message = `the score would be refused: ${checked.error}`;
    throw validationError(`score ${message}`, [{ path: 'score', message }]);
  }
  return {
    name: body.score.name,
    dataType: body.score.dataType,
    value: checked.value,
    stringValue: body.score.dataType === 'boolean' ? checked.stringValue : null,
    comment: outcome.comment.slice(0, 4000),
  };
}

const errors = {
  400: errorEnvelopeSchema,
  401: errorEnvelopeSchema,
  403: errorEnvelopeSchema,
  404: errorEnvelopeSchema,
  502: errorEnvelopeSchema,
  503: errorEnvelopeSchema,
};

export const evaluatorPreviewRoutes: FastifyPluginAsyncZod<{ deps: PreviewDeps }> = async (app, { deps }) => {
  // The trace it judges may have just been sent (its id is in the body: the workspace's writes).
  app.post('/preview', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags: ['evaluators'],
      summary: 'Run an evaluator definition once on a trace and answer the score it would give, storing nothing',
      body: previewEvaluatorBody,
      response: { 200: envelope(evaluatorPreviewSchema), ...errors },
    },
    handler: async (request, reply) => sendData(request, reply, await previewEvaluator(deps, request.auth.workspaceId, request.body)),
  });
};
