import { z } from 'zod';

/** What the score tables' statements share: their parameters' and rows' shapes. */

export const workspaceId = z.string().min(1);

/** An engine DateTime64(6) as text: 'YYYY-MM-DD hh:mm:ss.ffffff' (UTC). */
export const storedTime = z.string().regex(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);

/** Per key (a trace, session, user or group) and score name: the count and mean of the live scores. */
export const averageRow = z.object({ key: z.string(), name: z.string(), n: z.coerce.number(), mean: z.number() });

/** A score as a read of `scores` gives it. */
export const scoreRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  data_type: z.enum(['numeric', 'categorical', 'boolean']),
  value: z.number(),
  string_value: z.string(),
  comment: z.string(),
  metadata: z.string(),
  source: z.string(),
  environment: z.string(),
  trace_id: z.string(),
  span_id: z.string(),
  session_id: z.string(),
  author_id: z.string(),
  config_id: z.string(),
  eval_trace_id: z.string(),
  /** Times as text under names of their own: an alias `timestamp` would shadow the column in WHERE and ORDER BY. */
  timestamp_text: storedTime,
  created_at_text: storedTime,
});
export type ScoreRow = z.infer<typeof scoreRowSchema>;

/** A score as a trace or a span shows it (contract/trace-scores.ts): some of a score's columns. */
export const targetScoreRowSchema = scoreRowSchema.pick({
  id: true,
  name: true,
  data_type: true,
  value: true,
  string_value: true,
  comment: true,
  source: true,
  author_id: true,
  trace_id: true,
  span_id: true,
  timestamp_text: true,
});
export type TargetScoreRow = z.infer<typeof targetScoreRowSchema>;
