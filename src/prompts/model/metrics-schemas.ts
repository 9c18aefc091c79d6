import { z } from 'zod';
import { isoTimeSchema } from '../../contract/rules/iso-time.js';
import { scoreAveragesSchema } from '../../contract/trace-scores.js';

const isoTime = isoTimeSchema.optional();

export const promptMetricsQuery = z
  .object({
    startAfter: isoTime.meta({ description: 'Spans starting after this time (default: no lower bound)' }),
    startBefore: isoTime.meta({ description: 'Spans starting before this time (default: no upper bound)' }),
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.startAfter !== undefined && q.startBefore !== undefined && Date.parse(q.startAfter) > Date.parse(q.startBefore)) {
      ctx.addIssue({ code: 'custom', path: ['startAfter'], message: 'must not be after startBefore' });
    }
  });
export type PromptMetricsQuery = z.infer<typeof promptMetricsQuery>;

export const versionMetricsSchema = z.object({
  version: z.string().meta({ description: 'As the spans name it; "" for spans that named the prompt but no version' }),
  promptId: z.number().int().nullable().meta({ description: 'The record of that version; null when no such version exists' }),
  labels: z.array(z.string()),
  calls: z.number().int().meta({ description: 'Spans that used this version' }),
  errorCount: z.number().int(),
  errorRate: z.number().meta({ description: 'errorCount / calls; 0 without calls' }),
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  costUsd: z.number(),
  costPerCall: z.number().nullable(),
  latencyMs: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
  ttftMs: z.object({ p50: z.number().nullable().meta({ description: 'null when no span of the version reported a time to first token' }) }),
  /** Per score name, the scores on the version's spans and on their traces: n and mean (absent without scores). */
  scores: scoreAveragesSchema.optional(),
});
export type VersionMetrics = z.infer<typeof versionMetricsSchema>;

export const promptMetricsSchema = z.object({
  name: z.string(),
  range: z.object({ startAfter: z.string().nullable(), startBefore: z.string().nullable() }),
  versions: z
    .array(versionMetricsSchema)
    .meta({ description: 'Every version of the prompt (newest first), then versions only the spans name' }),
});
export type PromptMetrics = z.infer<typeof promptMetricsSchema>;
