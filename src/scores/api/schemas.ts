import { z } from 'zod';
import { isoTimeSchema } from '../../contract/rules/iso-time.js';

/** Wire shapes of scores: one score as sent, the request bodies, the stored score, the list's query. */

export const scoreDataTypes = ['numeric', 'categorical', 'boolean'] as const;
export const scoreSources = ['api', 'sdk', 'annotation', 'eval', 'otel'] as const;
export const maxScoresPerRequest = 1000;

const idSchema = z.string().min(1).max(128);
export const scoreNameSchema = z.string().min(1).max(200);

export const scoreInputSchema = z
  .object({
    id: idSchema.optional().meta({ description: 'Client-supplied for idempotent upsert (a re-send corrects the score); else generated' }),
    name: scoreNameSchema,
    dataType: z.enum(scoreDataTypes).optional().meta({
      description: "The score's type; without it, the config's, else from the value (number, string, boolean)",
    }),
    value: z
      .union([z.number().finite(), z.string().min(1).max(500), z.boolean()])
      .meta({ description: 'A number (numeric; boolean as 0/1), a category label (categorical), or true/false (boolean)' }),
    comment: z.string().max(4000).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    source: z.enum(scoreSources).optional().meta({ description: 'Default `api`' }),
    environment: z.string().min(1).max(200).optional(),
    timestamp: isoTimeSchema.optional().meta({ description: 'When the score was given; default now' }),
    traceId: idSchema.optional(),
    spanId: idSchema.optional(),
    sessionId: idSchema.optional(),
    /** The trace of the judge (an evaluator) that produced the score. */
    evalTraceId: idSchema.optional(),
  })
  .superRefine((score, ctx) => {
    if (score.traceId === undefined && score.sessionId === undefined && score.spanId === undefined)
      ctx.addIssue({ code: 'custom', path: ['traceId'], message: 'a score needs a target: traceId (with spanId for a span) or sessionId' });
    if (score.spanId !== undefined && score.traceId === undefined)
      ctx.addIssue({ code: 'custom', path: ['spanId'], message: 'a span score needs the traceId of the span' });
  });
export type ScoreInput = z.infer<typeof scoreInputSchema>;

/** One score or `{scores: [...]}`; each score is validated on its own and answered per index. */
export const ingestScoresBodySchema = z
  .looseObject({
    scores: z.array(z.unknown()).max(maxScoresPerRequest, `at most ${maxScoresPerRequest} scores per request`).optional(),
  })
  .meta({ description: 'One score (its fields at the top level), or `scores`: an array of them' });

export const scoreIngestResultSchema = z.object({
  accepted: z.number().int(),
  rejected: z.number().int(),
  /** Per item, in the order sent: the stored score's id, or null when rejected. */
  ids: z.array(z.string().nullable()),
  errors: z.array(z.object({ index: z.number().int(), id: z.string().nullable(), path: z.string(), message: z.string() })),
});
export type ScoreIngestResult = z.infer<typeof scoreIngestResultSchema>;

export const scoreSchema = z.object({
  id: z.string(),
  name: z.string(),
  dataType: z.enum(scoreDataTypes),
  value: z.number(),
  stringValue: z.string().nullable(),
  comment: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  source: z.string(),
  environment: z.string().nullable(),
  traceId: z.string().nullable(),
  spanId: z.string().nullable(),
  sessionId: z.string().nullable(),
  authorId: z.string().nullable(),
  configId: z.string().nullable(),
  evalTraceId: z.string().nullable(),
  timestamp: z.string(),
  createdAt: z.string(),
});
export type Score = z.infer<typeof scoreSchema>;

const queryNumber = z.coerce.number().finite();
export const listScoresQuery = z
  .object({
    name: scoreNameSchema.optional(),
    source: z.enum(scoreSources).optional(),
    dataType: z.enum(scoreDataTypes).optional(),
    traceId: idSchema.optional(),
    spanId: idSchema.optional(),
    sessionId: idSchema.optional().meta({ description: "A session's scores and the scores of its traces" }),
    userId: z.string().min(1).max(256).optional().meta({ description: "The scores of the user's traces" }),
    authorId: z.string().min(1).max(256).optional(),
    minValue: queryNumber.optional(),
    maxValue: queryNumber.optional(),
    stringValue: z.string().min(1).max(500).optional(),
    from: isoTimeSchema.optional().meta({ description: 'Scores given at or after this time' }),
    to: isoTimeSchema.optional().meta({ description: 'Scores given before this time' }),
    promptName: z.string().min(1).max(256).optional().meta({
      description: 'Scores of the spans that used this prompt, and of the traces holding them',
    }),
    promptVersion: z.string().min(1).max(64).optional().meta({ description: 'With promptName: of this version only' }),
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    cursor: z.string().min(1).max(512).optional().meta({ description: "The previous page's meta.pagination.nextCursor" }),
  })
  .refine((q) => q.promptVersion === undefined || q.promptName !== undefined, {
    path: ['promptVersion'],
    message: 'promptVersion needs promptName',
  });
export type ListScoresQuery = z.infer<typeof listScoresQuery>;

export const scoreParams = z.object({ id: idSchema });

export const scoreListMetaSchema = {
  pagination: z.object({ limit: z.number().int(), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
};
