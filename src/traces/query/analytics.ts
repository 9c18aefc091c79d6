import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { defaultQueryLimits, limitSettings, resolveWindow, type QueryLimits } from '../model/query-limits.js';
import type { AnalyticsQuery, AnalyticsResult } from '../model/wire/analytics-schemas.js';
import { finiteOrNull, finiteSum } from '../model/finite.js';
import { selectAnalyticsTotals, selectCostBreakdown } from '../tables/traces-table.js';

/**
 * GET /api/traces/analytics as two aggregate queries (tables/traces-table.ts): one over the
 * deduplicated trace summaries (totals, latency, usage over time, efficiency, budget), one over
 * the per-trace span groups on the summaries (the cost breakdown). A trace is in range when startAfter < its start time < startBefore, the same
 * rule as the list filters, so the list's total and `totals.traceCount` agree.
 */

export const defaultRangeDays = 30;
/** Up to this range the usage series has hourly buckets, beyond it daily ones. */
export const hourlyUpToMs = 2 * 24 * 3600_000;

export type Interval = 'hour' | 'day';
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

type TotalsRow = Awaited<ReturnType<typeof selectAnalyticsTotals>>[number];
type BreakdownRow = Awaited<ReturnType<typeof selectCostBreakdown>>[number];

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
  const filter = { startAfter: range.startAfter, startBefore: range.startBefore };
  const [rows, shares] = await Promise.all([
    selectAnalyticsTotals(
      clickhouse,
      { workspaceId, filter, interval: range.interval, budget: query.budget ?? 0, projectionFactor: range.projectionFactor },
      settings,
    ),
    selectCostBreakdown(clickhouse, { workspaceId, filter }, settings),
  ]);
  const total = rows.find((r) => r.isTotal === 1) as TotalsRow;
  return shape(range, total, rows, shares, query.budget);
}

function bySource(total: TotalsRow) {
  const [provided, computed] = [finiteSum(total.costProvided), finiteSum(total.costComputed)];
  const sum = provided + computed;
  const entry = (key: 'provided' | 'computed', costUsd: number) => ({ key, costUsd, share: sum === 0 ? 0 : costUsd / sum });
  return [entry('provided', provided), entry('computed', computed)];
}

function shape(
  range: AnalyticsRange,
  total: TotalsRow,
  rows: TotalsRow[],
  shares: BreakdownRow[],
  budget: number | undefined,
): AnalyticsResult {
  const byBucket = new Map(rows.filter((r) => r.isTotal === 0).map((r) => [r.bucket * 1000, r]));
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
    shares
      .filter((s) => s.dimension === dimension)
      .map(({ key, costUsd, share }) => ({ key, costUsd: finiteSum(costUsd), share: finiteOrNull(share) ?? 0 }));
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
