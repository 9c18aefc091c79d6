import { z } from 'zod';
import { isoTimeSchema } from '../../contract/rules/iso-time.js';
import { compileCheckPattern } from '../model/checks.js';

/** Wire shapes of model connections, evaluators and their jobs. */

const nameSchema = z.string().trim().min(1).max(200);
export const idParams = z.object({ id: z.uuid() });

export const modelProviders = ['openai', 'anthropic'] as const;

export const createModelConnectionBody = z
  .object({
    name: nameSchema,
    provider: z
      .enum(modelProviders)
      .meta({ description: '`openai`: any OpenAI-compatible chat completions API; `anthropic`: the Messages API' }),
    baseUrl: z.string().min(1).max(2000).meta({ description: 'e.g. https://api.openai.com/v1 (the path before /chat/completions)' }),
    apiKey: z.string().min(1).max(1000).meta({ description: 'Stored encrypted; never answered (only its last 4 characters)' }),
    defaultModel: z.string().min(1).max(200),
    parameters: z
      .object({ temperature: z.number().min(0).max(2).optional(), maxTokens: z.number().int().min(1).max(100_000).optional() })
      .strict()
      .default({}),
    requestsPerMinute: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .nullable()
      .optional()
      .meta({ description: 'Calls per minute the service makes with this connection, over all its instances; null or absent: no limit' }),
  })
  .strict();
export type CreateModelConnection = z.infer<typeof createModelConnectionBody>;
export const updateModelConnectionBody = createModelConnectionBody.partial().strict();
export type UpdateModelConnection = z.infer<typeof updateModelConnectionBody>;

export const modelConnectionSchema = z.object({
  id: z.string(),
  name: z.string(),
  provider: z.enum(modelProviders),
  baseUrl: z.string(),
  apiKeyTail: z.string().meta({ description: 'The last 4 characters of the key' }),
  defaultModel: z.string(),
  parameters: z.object({ temperature: z.number().optional(), maxTokens: z.number().optional() }),
  requestsPerMinute: z.number().int().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ModelConnection = z.infer<typeof modelConnectionSchema>;

export const connectionTestSchema = z.object({
  ok: z.boolean(),
  answer: z.string().nullable(),
  error: z.string().nullable(),
  statusCode: z.number().int().nullable(),
});

/** A prompt of prompt management: by name, and a label or a version (neither: the latest). */
const promptRefSchema = z
  .object({ name: z.string().min(1).max(200), label: z.string().min(1).max(64).optional(), version: z.string().min(1).max(64).optional() })
  .strict()
  .refine((p) => p.label === undefined || p.version === undefined, { message: 'give a label or a version, not both', path: ['version'] });
export type PromptRef = z.infer<typeof promptRefSchema>;

/** A field of the target: `input`, `output`, `expectedOutput`, `metadata.<path>`, `attributes.<path>`. */
export const targetFieldSchema = z
  .string()
  .regex(
    /^(input|output|expectedOutput)(\.[^.]+)*$|^(metadata|attributes)(\.[^.]+)+$/,
    'must be input, output, expectedOutput, or a metadata.* / attributes.* path',
  );

export const checkSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('json_parse'), field: targetFieldSchema.default('output') }).strict(),
  z
    .object({
      type: z.literal('regex'),
      field: targetFieldSchema.default('output'),
      pattern: z.string().min(1).max(1000),
      flags: z
        .string()
        .regex(/^[imsu]*$/)
        .optional(),
    })
    .strict()
    .superRefine((value, ctx) => {
      try {
        compileCheckPattern(value.pattern, value.flags);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['pattern'], message: `is not a pattern RE2 takes: ${(error as Error).message}` });
      }
    }),
  z
    .object({
      type: z.literal('contains'),
      field: targetFieldSchema.default('output'),
      text: z.string().min(1).max(1000),
      caseSensitive: z.boolean().default(true),
    })
    .strict(),
  z
    .object({
      type: z.literal('length'),
      field: targetFieldSchema.default('output'),
      min: z.number().int().min(0).optional(),
      max: z.number().int().min(0).optional(),
    })
    .strict(),
  z.object({ type: z.literal('latency'), maxMs: z.number().nonnegative() }).strict(),
  z.object({ type: z.literal('cost'), maxUsd: z.number().nonnegative() }).strict(),
  z.object({ type: z.literal('output_schema'), field: targetFieldSchema.default('output'), prompt: promptRefSchema }).strict(),
]);
export type Check = z.infer<typeof checkSchema>;

export const judgeSchema = z
  .object({
    connectionId: z.uuid(),
    model: z.string().min(1).max(200).optional().meta({ description: "Default: the connection's default model" }),
    prompt: promptRefSchema,
    variables: z.record(z.string().min(1).max(100), targetFieldSchema).default({}),
  })
  .strict();
export type Judge = z.infer<typeof judgeSchema>;

export const targetKinds = ['traces', 'spans', 'runs'] as const;

export const targetSchema = z
  .object({
    kind: z
      .enum(targetKinds)
      .default('traces')
      .meta({ description: '`traces`: new traces; `spans`: new spans; `runs`: the items of experiment runs (their traces)' }),
    filters: z
      .object({
        name: z.string().min(1).max(200).optional().meta({ description: "The trace's name (kind traces) or the span's (kind spans)" }),
        tags: z.array(z.string().min(1).max(200)).max(20).optional(),
        environment: z.string().min(1).max(200).optional(),
        spanKind: z.string().min(1).max(64).optional().meta({ description: 'Kind spans: the span kind, e.g. llm.chat' }),
        promptName: z.string().min(1).max(200).optional().meta({ description: 'Kind spans: spans that used this prompt' }),
        datasetId: z.uuid().optional().meta({ description: "Kind runs: only this dataset's runs" }),
      })
      .strict()
      .default({}),
    samplingRate: z.number().min(0).max(1).default(1),
    delaySeconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(30)
      .meta({ description: "Wait after the trace's end (a run item: after it was recorded) before judging it" }),
  })
  .strict()
  .superRefine((target, ctx) => {
    const only = (field: keyof typeof target.filters, kind: (typeof targetKinds)[number]) => {
      if (target.filters[field] !== undefined && target.kind !== kind)
        ctx.addIssue({ code: 'custom', path: ['filters', field], message: `only for kind ${kind}` });
    };
    only('spanKind', 'spans');
    only('promptName', 'spans');
    only('datasetId', 'runs');
    if (target.kind === 'runs')
      for (const field of ['name', 'tags', 'environment'] as const)
        if (target.filters[field] !== undefined)
          ctx.addIssue({ code: 'custom', path: ['filters', field], message: 'not for kind runs (use datasetId)' });
  });
export type EvaluatorTarget = z.infer<typeof targetSchema>;

export const scoreSpecSchema = z.object({ name: z.string().min(1).max(200), dataType: z.enum(['numeric', 'boolean']) }).strict();

export const createEvaluatorBody = z
  .object({
    name: nameSchema,
    type: z.enum(['llm_judge', 'check']),
    judge: judgeSchema.optional(),
    check: checkSchema.optional(),
    score: scoreSpecSchema,
    target: targetSchema.default({ kind: 'traces', filters: {}, samplingRate: 1, delaySeconds: 30 }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.type === 'llm_judge' && body.judge === undefined)
      ctx.addIssue({ code: 'custom', path: ['judge'], message: 'an llm_judge evaluator needs judge' });
    if (body.type === 'check' && body.check === undefined)
      ctx.addIssue({ code: 'custom', path: ['check'], message: 'a check evaluator needs check' });
    if (body.type === 'llm_judge' && body.check !== undefined)
      ctx.addIssue({ code: 'custom', path: ['check'], message: 'only for type check' });
    if (body.type === 'check' && body.judge !== undefined)
      ctx.addIssue({ code: 'custom', path: ['judge'], message: 'only for type llm_judge' });
  });
export type CreateEvaluator = z.infer<typeof createEvaluatorBody>;
export type EvaluatorDefinition = Omit<CreateEvaluator, 'name' | 'type'>;

export const evaluatorSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(['llm_judge', 'check']),
  version: z.number().int(),
  status: z.enum(['active', 'paused']),
  judge: judgeSchema.optional(),
  check: checkSchema.optional(),
  score: scoreSpecSchema,
  target: targetSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Evaluator = z.infer<typeof evaluatorSchema>;

export const evaluatorJobSchema = z.object({
  id: z.string(),
  evaluatorVersion: z.number().int(),
  traceId: z.string().meta({ description: 'The trace judged (a run item: the trace that processed it)' }),
  spanId: z.string().nullable().meta({ description: 'The span judged; null when the target is a trace' }),
  runId: z.string().nullable().meta({ description: 'The experiment run of the item judged' }),
  datasetItemId: z.string().nullable(),
  status: z.enum(['pending', 'succeeded', 'failed', 'skipped']),
  attempts: z.number().int(),
  error: z.string().nullable(),
  scoreId: z.string().nullable(),
  judgeTraceId: z
    .string()
    .nullable()
    .meta({ description: "The trace (source evaluator) of the job's last judge call: its messages, tokens and cost" }),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});
export type EvaluatorJob = z.infer<typeof evaluatorJobSchema>;

export const backfillBody = z
  .object({
    from: isoTimeSchema.optional().meta({ description: 'Targets that started (run items: were recorded) after this time' }),
    to: isoTimeSchema.optional().meta({ description: 'and before this time; default now' }),
    runId: z.uuid().optional().meta({ description: 'Kind runs: every item of this experiment run, instead of a window' }),
    maxJobs: z.number().int().min(1).max(10_000).default(1000).meta({ description: 'At most this many jobs are queued' }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.from === undefined) === (body.runId === undefined))
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'give from (a window) or runId, one of them' });
    if (body.runId !== undefined && body.to !== undefined) ctx.addIssue({ code: 'custom', path: ['to'], message: 'only with from' });
    if (body.from !== undefined && body.to !== undefined && Date.parse(body.to) <= Date.parse(body.from))
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' });
  });
export type Backfill = z.infer<typeof backfillBody>;

export const backfillResultSchema = z.object({
  queued: z.number().int().meta({ description: 'New jobs queued' }),
  skipped: z.number().int().meta({ description: 'New jobs recorded as skipped, left out by the sampling rate' }),
  existing: z.number().int().meta({ description: 'Targets that already had a job of this evaluator version (never queued twice)' }),
  unfinished: z.number().int().meta({ description: 'Traces still running in the window, left out' }),
  truncated: z.boolean().meta({ description: 'maxJobs was reached before the end of the window: backfill again from `resumeFrom`' }),
  resumeFrom: z.string().nullable(),
});
export type BackfillResult = z.infer<typeof backfillResultSchema>;
