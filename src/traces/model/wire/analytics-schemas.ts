import { z } from 'zod';
import { listTracesQuery } from '../schemas.js';
import { scoreAveragesSchema } from '../../../contract/trace-scores.js';

/**
 * Wire shapes of GET /api/traces/stats and /api/traces/analytics (field names: DESIGN.md,
 * "Analytics field names"). Times and session ids take the same rules as the list filters.
 */

const isoTime = listTracesQuery.shape.startAfter;
const sessionId = listTracesQuery.shape.sessionId;

export const statsGroupBys = ['model', 'provider', 'kind', 'source', 'service', 'user', 'session', 'tag', 'name', 'score'] as const;
export type StatsGroupBy = (typeof statsGroupBys)[number];
/**
 * Groups with many values (users, sessions, tags, names), and score names (each read joins the
 * workspace's scores): read within a window, default the last 30 days.
 */
export const windowedGroupBys: ReadonlySet<StatsGroupBy> = new Set(['user', 'session', 'tag', 'name', 'score']);

/** `from` after `to` is refused with the field named; equal bounds give an empty range. */
function rangeInOrder(fromKey: string, toKey: string) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const from = value[fromKey];
    const to = value[toKey];
    if (typeof from === 'string' && typeof to === 'string' && Date.parse(from) > Date.parse(to)) {
      ctx.addIssue({ code: 'custom', path: [fromKey], message: `must not be after ${toKey}` });
    }
  };
}

export const statsQuerySchema = z
  .object({
    groupBy: z.enum(statsGroupBys).default('model'),
    from: isoTime,
    to: isoTime,
    sessionId,
    /** The top groups in the answer's order. */
    limit: z.coerce.number().int().min(1).max(1000).default(100),
  })
  .strict()
  .superRefine(rangeInOrder('from', 'to'));
export type StatsQuery = z.infer<typeof statsQuerySchema>;

export const analyticsQuerySchema = z
  .object({
    startAfter: isoTime,
    startBefore: isoTime,
    // A query value is text: an empty one is refused rather than read as 0.
    budget: z.string().trim().min(1, 'must be a non-negative number').pipe(z.coerce.number<string>().finite().nonnegative()).optional(),
  })
  .strict()
  .superRefine(rangeInOrder('startAfter', 'startBefore'));
export type AnalyticsQuery = z.infer<typeof analyticsQuerySchema>;

const tokens = {
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  costUsd: z.number(),
};

const ttftSchema = z.object({ p50: z.number().nullable(), p95: z.number().nullable() });

export const statsGroupSchema = z.object({
  /** null for spans or traces that carry no value of the dimension (a tool span has no model). */
  key: z.string().nullable(),
  traceCount: z.number().int(),
  spanCount: z.number().int(),
  errorCount: z.number().int(),
  ...tokens,
  latencyMs: z.object({ avg: z.number().nullable(), p50: z.number().nullable(), p95: z.number().nullable(), p99: z.number().nullable() }),
  /** Time to first token of the group's spans that have one (streamed generations); null when none. */
  ttftMs: ttftSchema,
  /** The scores on the group's traces and their spans, per score name (empty without any). */
  scores: scoreAveragesSchema.optional(),
});
export type StatsGroup = z.infer<typeof statsGroupSchema>;

export const statsResultSchema = z.object({
  groupBy: z.enum(statsGroupBys),
  from: z.string().nullable(),
  to: z.string().nullable(),
  groups: z.array(statsGroupSchema),
});
export type StatsResult = z.infer<typeof statsResultSchema>;

const costShare = z.object({ key: z.string().nullable(), costUsd: z.number(), share: z.number() });

export const analyticsResultSchema = z.object({
  range: z.object({ startAfter: z.string(), startBefore: z.string() }),
  totals: z.object({
    traceCount: z.number().int(),
    spanCount: z.number().int(),
    errorCount: z.number().int(),
    errorRate: z.number(),
    ...tokens,
    /** Counted generation spans of the range that found no price (their cost is missing from costUsd). */
    unpricedSpanCount: z.number().int(),
  }),
  latencyMs: z.object({
    avg: z.number().nullable(),
    p50: z.number().nullable(),
    p90: z.number().nullable(),
    p95: z.number().nullable(),
    p99: z.number().nullable(),
  }),
  ttftMs: ttftSchema,
  costBreakdown: z.object({
    byModel: z.array(costShare),
    byProvider: z.array(costShare),
    byKind: z.array(costShare),
    /** Cost sent by clients (`provided`) and computed from prices (`computed`), always both, in that order. */
    bySource: z.array(costShare.extend({ key: z.enum(['provided', 'computed']) })),
  }),
  tokenUsageOverTime: z.object({
    interval: z.enum(['hour', 'day']),
    points: z.array(z.object({ bucket: z.string(), ...tokens, traceCount: z.number().int() })),
  }),
  costEfficiency: z.object({
    costPerTrace: z.number().nullable(),
    costPer1kTokens: z.number().nullable(),
    tokensPerTrace: z.number().nullable(),
    costPerSuccessfulTrace: z.number().nullable(),
  }),
  budget: z
    .object({
      budgetUsd: z.number(),
      spentUsd: z.number(),
      remainingUsd: z.number(),
      /** spent / budget; null when the budget is 0. */
      utilization: z.number().nullable(),
      exceeded: z.boolean(),
      projectedUsd: z.number(),
    })
    .optional(),
});
export type AnalyticsResult = z.infer<typeof analyticsResultSchema>;
