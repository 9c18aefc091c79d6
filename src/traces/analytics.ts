import type { ClickHouseClient } from '../stores/clickhouse.js';
import { defaultQueryLimits, limitSettings, resolveWindow, type QueryLimits } from './query-limits.js';
import type { AnalyticsQuery, AnalyticsResult } from './analytics-schemas.js';
import { traceFigures, traceRows, type CompiledQuery, type TraceFilter } from './span-groups.js';
import { finiteOrNull, finiteSum, type AggregateRow } from './stats.js';

/**
 * GET /api/traces/analytics as two aggregate queries: one over the deduplicated trace
 * summaries (totals, latency, usage over time, efficiency, budget), one over the per-trace
 * span groups on the summaries (the cost breakdown). A trace is in range when startAfter < its start time < startBefore, the same
 * rule as the list filters, so the list's total and `totals.traceCount` agree.
 *
 * Percentiles: `quantilesExactInclusive`, exact, for the reasons given in stats.ts.
 */

export const defaultRangeDays = 30;
/** Up to this range the usage series has hourly buckets, beyond it daily ones. */
export const hourlyUpToMs = 2 * 24 * 3600_000;

export type Interval = 'hour' | 'day';
const bucketExpression: Record<Interval, string> = {
  hour: 'toStartOfHour(start_time)',
  day: 'toStartOfDay(start_time)',
};
const intervalMs: Record<Interval, number> = { hour: 3600_000, day: 24 * 3600_000 };

export interface AnalyticsRange {
  startAfter: string;
  startBefore: string;
  interval: Interval;
  /** Range length over the part of it already elapsed: the factor that projects spend to its end. */
  projectionFactor: number;
}

/** No range: the last 30 days. One bound only: the other is now, or 30 days before startBefore. */
export function resolveRange(query: Pick<AnalyticsQuery, 'startAfter' | 'startBefore'>, now: number): AnalyticsRange {
  const after = query.startAfter !== undefined ? Date.parse(query.startAfter) : undefined;
  const end = query.startBefore !== undefined ? Date.parse(query.startBefore) : Math.max(now, after ?? now);
  const start = after ?? end - defaultRangeDays * 24 * 3600_000;
  const elapsed = Math.min(now, end) - start;
  return {
    startAfter: query.startAfter ?? new Date(start).toISOString(),
    startBefore: query.startBefore ?? new Date(end).toISOString(),
    interval: end - start <= hourlyUpToMs ? 'hour' : 'day',
    // Nothing elapsed yet (a range in the future): nothing to extrapolate from.
    projectionFactor: elapsed > 0 ? (end - start) / elapsed : 1,
  };
}

/**
 * Totals and one row per time bucket in one pass: GROUPING SETS computes the total row
 * (`isTotal = 1`) beside the buckets, so no figure is summed outside the engine. The outer
 * SELECT derives rates, efficiency and the budget block from the same aggregates.
 */
export function compileTraceTotalsQuery(range: AnalyticsRange): CompiledQuery {
  const rows = traceRows({ startAfter: range.startAfter, startBefore: range.startBefore });
  return {
    query: `
  SELECT *,
    if(traceCount = 0, 0, errorCount / traceCount) AS errorRate,
    if(traceCount = 0, NULL, costUsd / traceCount) AS costPerTrace,
    if(totalTokens = 0, NULL, costUsd * 1000 / totalTokens) AS costPer1kTokens,
    if(traceCount = 0, NULL, totalTokens / traceCount) AS tokensPerTrace,
    if(completedCount = 0, NULL, costUsd / completedCount) AS costPerSuccessfulTrace,
    {budget:Float64} - costUsd AS remainingUsd,
    if({budget:Float64} = 0, NULL, costUsd / {budget:Float64}) AS utilization,
    costUsd > {budget:Float64} AS exceeded,
    costUsd * {projectionFactor:Float64} AS projectedUsd
  FROM (
    SELECT grouping(bucket) AS isTotal,
      toUnixTimestamp(${bucketExpression[range.interval]}) AS bucket,
      ${traceFigures('0.5, 0.9, 0.95, 0.99')},
      -- Successful traces: completed without error; running ones are not (yet) successes.
      countIf(status = 'completed') AS completedCount,
      -- How complete the cost is (clickhouse/0006): by source, and the spans without a price.
      sum(cost_provided) AS costProvided,
      sum(cost_computed) AS costComputed,
      sum(unpriced_spans) AS unpricedSpanCount
    FROM ${rows.query}
    GROUP BY GROUPING SETS ((), (bucket))
  )
  ORDER BY isTotal DESC, bucket ASC`,
    params: rows.params,
  };
}

/**
 * Cost per model, provider and kind from the summaries' span groups: one ARRAY JOIN per dimension
 * over its key and cost subcolumns only (never the durations), grouped on the stored
 * LowCardinality keys; shares are each group's part of its dimension's total, computed by a
 * window in the engine.
 */
export function compileCostBreakdownQuery(filter: TraceFilter): CompiledQuery {
  const dimensions = ['model', 'provider', 'kind'] as const;
  const rows = dimensions.map((d) => traceRows(filter, `ARRAY JOIN by_${d}.key AS k, by_${d}.cost_usd AS c`));
  const perDimension = dimensions.map(
    (d, i) => `SELECT '${d}' AS dimension, nullIf(toString(k), '') AS key, sum(c) AS costUsd FROM ${rows[i]!.query} GROUP BY k`,
  );
  return {
    query: `
  SELECT dimension, key, costUsd,
    if(sum(costUsd) OVER (PARTITION BY dimension) = 0, 0, costUsd / sum(costUsd) OVER (PARTITION BY dimension)) AS share
  FROM (
    ${perDimension.join('\n    UNION ALL\n    ')}
  )
  ORDER BY dimension, costUsd DESC, key ASC NULLS LAST`,
    params: rows[0]!.params,
  };
}

interface TotalsRow extends AggregateRow {
  isTotal: number;
  bucket: number;
  errorRate: number;
  costPerTrace: number | null;
  costPer1kTokens: number | null;
  tokensPerTrace: number | null;
  costPerSuccessfulTrace: number | null;
  remainingUsd: number;
  utilization: number | null;
  exceeded: boolean | number;
  projectedUsd: number;
  costProvided: number;
  costComputed: number;
  unpricedSpanCount: number | string;
}

interface BreakdownRow {
  dimension: 'model' | 'provider' | 'kind';
  key: string | null;
  costUsd: number;
  share: number;
}

/** Every bucket of the range, oldest first: the engine only answers buckets that hold traces. */
export function bucketStarts(range: AnalyticsRange): number[] {
  const step = intervalMs[range.interval];
  const first = Math.floor(Date.parse(range.startAfter) / step) * step;
  const end = Date.parse(range.startBefore);
  const starts: number[] = [];
  for (let t = first; t < end; t += step) starts.push(t);
  return starts;
}

export async function getAnalytics(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  query: AnalyticsQuery,
  now: number = Date.now(),
  limits: QueryLimits = defaultQueryLimits,
): Promise<AnalyticsResult> {
  const settings = limitSettings(limits);
  const range = resolveRange(query, now);
  // The range's length against LOUPE_QUERY_MAX_WINDOW_DAYS (400 naming startAfter when longer).
  resolveWindow(range.startAfter, range.startBefore, limits, undefined, now);
  const totals = compileTraceTotalsQuery(range);
  const breakdown = compileCostBreakdownQuery({ startAfter: range.startAfter, startBefore: range.startBefore });
  const [totalsResult, breakdownResult] = await Promise.all([
    clickhouse.query({
      query: `${totals.query}\n${settings}`,
      query_params: { ...totals.params, workspaceId, budget: query.budget ?? 0, projectionFactor: range.projectionFactor },
      format: 'JSONEachRow',
    }),
    clickhouse.query({ query: `${breakdown.query}\n${settings}`, query_params: { ...breakdown.params, workspaceId }, format: 'JSONEachRow' }),
  ]);
  const rows = await totalsResult.json<TotalsRow>();
  const shares = await breakdownResult.json<BreakdownRow>();
  const total = rows.find((r) => Number(r.isTotal) === 1) as TotalsRow;
  return shape(range, total, rows, shares, query.budget);
}

function bySource(total: TotalsRow) {
  const sum = total.costProvided + total.costComputed;
  const entry = (key: 'provided' | 'computed', costUsd: number) => ({ key, costUsd, share: sum === 0 ? 0 : costUsd / sum });
  return [entry('provided', total.costProvided), entry('computed', total.costComputed)];
}

function shape(range: AnalyticsRange, total: TotalsRow, rows: TotalsRow[], shares: BreakdownRow[], budget: number | undefined): AnalyticsResult {
  const byBucket = new Map(rows.filter((r) => Number(r.isTotal) === 0).map((r) => [Number(r.bucket) * 1000, r]));
  const points = bucketStarts(range).map((start) => {
    const row = byBucket.get(start);
    return {
      bucket: new Date(start).toISOString(),
      inputTokens: row ? finiteSum(row.inputTokens) : 0,
      outputTokens: row ? finiteSum(row.outputTokens) : 0,
      totalTokens: row ? finiteSum(row.totalTokens) : 0,
      costUsd: row ? finiteSum(row.costUsd) : 0,
      traceCount: Number(row?.traceCount ?? 0),
    };
  });
  const [p50, p90, p95, p99] = total.latencyPercentiles;
  const part = (dimension: BreakdownRow['dimension']) =>
    shares.filter((s) => s.dimension === dimension).map(({ key, costUsd, share }) => ({ key, costUsd: finiteSum(costUsd), share: finiteOrNull(share) ?? 0 }));
  return {
    range: { startAfter: range.startAfter, startBefore: range.startBefore },
    totals: {
      traceCount: Number(total.traceCount),
      spanCount: Number(total.spanCount),
      errorCount: Number(total.errorCount),
      errorRate: finiteOrNull(total.errorRate) ?? 0,
      inputTokens: finiteSum(total.inputTokens),
      outputTokens: finiteSum(total.outputTokens),
      totalTokens: finiteSum(total.totalTokens),
      costUsd: finiteSum(total.costUsd),
      unpricedSpanCount: Number(total.unpricedSpanCount),
    },
    latencyMs: {
      avg: finiteOrNull(total.latencyAvg),
      p50: finiteOrNull(p50),
      p90: finiteOrNull(p90),
      p95: finiteOrNull(p95),
      p99: finiteOrNull(p99),
    },
    ttftMs: { p50: finiteOrNull(total.ttftPercentiles[0]), p95: finiteOrNull(total.ttftPercentiles[1]) },
    costBreakdown: { byModel: part('model'), byProvider: part('provider'), byKind: part('kind'), bySource: bySource(total) },
    tokenUsageOverTime: { interval: range.interval, points },
    costEfficiency: {
      costPerTrace: finiteOrNull(total.costPerTrace),
      costPer1kTokens: finiteOrNull(total.costPer1kTokens),
      tokensPerTrace: finiteOrNull(total.tokensPerTrace),
      costPerSuccessfulTrace: finiteOrNull(total.costPerSuccessfulTrace),
    },
    ...(budget === undefined
      ? {}
      : {
          budget: {
            budgetUsd: budget,
            spentUsd: finiteSum(total.costUsd),
            remainingUsd: finiteOrNull(total.remainingUsd) ?? -Number.MAX_VALUE,
            utilization: finiteOrNull(total.utilization),
            exceeded: Boolean(Number(total.exceeded)),
            projectedUsd: finiteSum(total.projectedUsd),
          },
        }),
  };
}
