import { z } from 'zod';
import { isoTimeSchema } from '../../contract/rules/iso-time.js';
import { scoreDataTypes, scoreNameSchema } from './schemas.js';

/** GET /api/scores/analytics: per score name over a window. */

export const scoreAnalyticsQuery = z
  .object({
    from: isoTimeSchema.optional().meta({ description: 'Scores given at or after this time; default 7 days before `to`' }),
    to: isoTimeSchema.optional().meta({ description: 'Scores given before this time; default now' }),
    name: scoreNameSchema.optional(),
    interval: z.enum(['hour', 'day']).default('day'),
  })
  .strict()
  .refine((q) => q.from === undefined || q.to === undefined || Date.parse(q.from) < Date.parse(q.to), {
    path: ['from'],
    message: 'must be before to',
  });
export type ScoreAnalyticsQuery = z.infer<typeof scoreAnalyticsQuery>;

export const scoreNameAnalyticsSchema = z.object({
  name: z.string(),
  dataType: z.enum(scoreDataTypes),
  count: z.number().int(),
  mean: z.number(),
  /** Numeric scores: the exact median; null for the others. */
  p50: z.number().nullable(),
  /** Categorical and boolean scores: the count per label ('true'/'false' for boolean). */
  distribution: z.record(z.string(), z.number().int()).nullable(),
  overTime: z.array(z.object({ bucket: z.string(), count: z.number().int(), mean: z.number() })),
});

export const scoreAnalyticsSchema = z.object({
  from: z.string(),
  to: z.string(),
  interval: z.enum(['hour', 'day']),
  scores: z.array(scoreNameAnalyticsSchema),
});
export type ScoreAnalytics = z.infer<typeof scoreAnalyticsSchema>;
