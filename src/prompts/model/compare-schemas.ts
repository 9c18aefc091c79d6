import { z } from 'zod';
import { scoreComparisonSchema } from '../../contract/prompt-scores.js';
import { promptMetricsQuery } from './metrics-schemas.js';
import { promptIdParams } from './schemas.js';

/** GET /api/prompt/:id/compare: the version of :id against another, by their spans' figures and scores. */

export const compareQuery = z
  .object({
    against: promptIdParams.shape.id.meta({ description: 'The version compared against (the baseline)' }),
    startAfter: promptMetricsQuery.shape.startAfter,
    startBefore: promptMetricsQuery.shape.startBefore,
  })
  .strict();
export type CompareQuery = z.infer<typeof compareQuery>;

const versionFiguresSchema = z.object({
  promptId: z.number().int(),
  name: z.string(),
  version: z.string(),
  calls: z.number().int(),
  costPerCall: z.number().nullable(),
  latencyMs: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
  errorRate: z.number(),
});

export const promptComparisonSchema = z.object({
  subject: versionFiguresSchema.meta({ description: 'The version of :id' }),
  baseline: versionFiguresSchema.meta({ description: 'The version of `against`' }),
  range: z.object({ startAfter: z.string().nullable(), startBefore: z.string().nullable() }),
  scores: z.array(scoreComparisonSchema).meta({
    description:
      "Per score name: n, mean and 95% interval of each side, the test of the difference (Welch's t, two proportions, chi-square), its p-value and the verdict on the subject (p < 0.05)",
  }),
});
export type PromptComparison = z.infer<typeof promptComparisonSchema>;
