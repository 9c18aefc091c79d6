import { z } from 'zod';
import type { ScoreAverages } from './trace-scores.js';

/**
 * How the prompts feature compares versions by their scores without importing the scores
 * feature: the scores feature implements these (src/scores/service/prompt-scores.ts) and the
 * app hands them to the prompt routes. A score counts for a prompt version when its span used
 * the version, or when it is on a trace holding such a span. Server-side only.
 */

const intervalSchema = z.object({ low: z.number(), high: z.number() }).nullable();

const groupSchema = z.object({
  n: z.number().int(),
  mean: z.number().nullable(),
  /** 95% interval of the mean (Student's t; Wilson's for boolean); null with too few scores. */
  ci95: intervalSchema,
  /** Categorical: counts per label. */
  distribution: z.record(z.string(), z.number().int()).optional(),
});

export const scoreComparisonSchema = z.object({
  name: z.string(),
  dataType: z.enum(['numeric', 'categorical', 'boolean']),
  higherIsBetter: z.boolean(),
  subject: groupSchema.meta({ description: 'The version asked about (`:id`)' }),
  baseline: groupSchema.meta({ description: 'The version compared against (`against`)' }),
  /** subject − baseline of the means; null when either has none. */
  difference: z.number().nullable(),
  test: z.enum(['welch_t', 'two_proportions_z', 'chi_square']).nullable(),
  statistic: z.number().nullable(),
  df: z.number().nullable(),
  pValue: z.number().nullable(),
  verdict: z.enum(['better', 'worse', 'no significant difference', 'different']),
});
export type ScoreComparison = z.infer<typeof scoreComparisonSchema>;

export interface PromptVersionRef {
  name: string;
  version: string;
}

export interface PromptScores {
  /** Per score name, the subject's scores against the baseline's, with the test of the difference. */
  compare: (
    workspaceId: string,
    subject: PromptVersionRef,
    baseline: PromptVersionRef,
    window: { startAfter?: string | undefined; startBefore?: string | undefined },
  ) => Promise<ScoreComparison[]>;
  /** Per version of the prompt, its scores' averages per name. */
  averagesByVersion: (
    workspaceId: string,
    promptName: string,
    window: { startAfter?: string | undefined; startBefore?: string | undefined },
  ) => Promise<Map<string, ScoreAverages>>;
}
