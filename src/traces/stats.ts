import type { ClickHouseClient } from '../stores/clickhouse.js';
import type { StatsGroup, StatsQuery, StatsResult } from './analytics-schemas.js';
import { windowedGroupBys, type StatsGroupBy } from './analytics-schemas.js';
import { defaultQueryLimits, limitSettings, resolveWindow, type QueryLimits } from './query-limits.js';
import { traceFigures, traceRows, ttftPercentiles, type CompiledQuery, type Dimension, type TraceFilter } from './span-groups.js';

/**
 * GET /api/traces/stats as one aggregate query per call.
 *
 * Latency percentiles use `quantilesExactInclusive`: exact (linear interpolation between the
 * two nearest values, the definition of most spreadsheets and numpy), where the sampling
 * (`quantile`) and t-digest variants are only approximately right and can miss by more than
 * 1% on small or skewed groups. It keeps every duration of a group in memory, 8 bytes each
 * (80 MB for 10 million spans), which the engine handles in one pass.
 *
 * Groups by model, provider and kind are over spans (a trace counts in every group one of its
 * spans falls in), read from the span groups each trace summary carries; by source
 * over trace summaries, as are service, user, session, name and tag (a trace counts in each of its tags'
 * groups). The range is half-open, `from` ≤ trace
 * start < `to`: adjacent ranges never count a trace twice.
 */

const orderGroups = 'ORDER BY costUsd DESC, traceCount DESC, key ASC NULLS LAST LIMIT {limit:UInt32}';
const levels = '0.5, 0.95, 0.99';

function statsFilter(query: StatsQuery): TraceFilter {
  return { startFrom: query.from, startBefore: query.to, sessionId: query.sessionId };
}

/** Where each dimension sits in a `traces.ttfts` tuple. */
const dimensionIndex: Record<Dimension, number> = { model: 1, provider: 2, kind: 3 };

/** The summary column (or tag) each trace-level dimension groups by; '' (not sent) is the null group. */
const traceDimensions: Record<Exclude<StatsGroupBy, Dimension>, { key: string; arrayJoin?: string }> = {
  source: { key: 'source' },
  service: { key: 'service' },
  user: { key: 'user_id' },
  session: { key: 'session_id' },
  name: { key: 'name' },
  tag: { key: 'tag', arrayJoin: 'LEFT ARRAY JOIN tags AS tag' },
};

/** Span-level groups: each trace's groups of the dimension (traces.by_<dimension>), summed per value. */
function compileSpanStats(dimension: Dimension, filter: TraceFilter): CompiledQuery {
  const rows = traceRows(filter, `ARRAY JOIN by_${dimension} AS g`);
  return {
    query: `
  SELECT nullIf(toString(g.key), '') AS key,
    count() AS traceCount,
    sum(g.spans) AS spanCount,
    sum(g.errors) AS errorCount,
    sum(g.input_tokens) AS inputTokens,
    sum(g.output_tokens) AS outputTokens,
    sum(g.total_tokens) AS totalTokens,
    sum(g.cost_usd) AS costUsd,
    avgArray(g.durations) AS latencyAvg,
    quantilesExactInclusiveArray(${levels})(g.durations) AS latencyPercentiles,
    ${ttftPercentiles(`arrayMap(x -> x.4, arrayFilter(x -> toString(x.${dimensionIndex[dimension]}) = toString(g.key), ttfts))`)}
  FROM ${rows.query}
  GROUP BY g.key
  ${orderGroups}`,
    params: rows.params,
  };
}

/** Trace-level groups: the deduplicated summaries, one row per trace (per tag of it, by tag). */
function compileTraceStats(groupBy: Exclude<StatsGroupBy, Dimension>, filter: TraceFilter): CompiledQuery {
  const { key, arrayJoin } = traceDimensions[groupBy];
  const rows = traceRows(filter, arrayJoin);
  return {
    query: `
  SELECT nullIf(${key}, '') AS key,
    ${traceFigures(levels)}
  FROM ${rows.query}
  GROUP BY key
  ${orderGroups}`,
    params: rows.params,
  };
}

export function compileStatsQuery(query: StatsQuery): CompiledQuery {
  const filter = statsFilter(query);
  const { groupBy } = query;
  return groupBy === 'model' || groupBy === 'provider' || groupBy === 'kind' ? compileSpanStats(groupBy, filter) : compileTraceStats(groupBy, filter);
}

/** The figures every trace aggregate answers, as the engine returns them (stats groups, analytics totals). */
export interface AggregateRow {
  traceCount: number;
  spanCount: number;
  errorCount: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
  latencyAvg: number | null;
  latencyPercentiles: Array<number | null>;
  ttftPercentiles: Array<number | null>;
}

interface StatsRow extends AggregateRow {
  key: string | null;
}

/** The engine answers NaN (as null or "nan") for percentiles of an empty set. */
export const finiteOrNull = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/**
 * A sum as the API answers it: always a number. Only values stored before the span bounds
 * existed can overflow a 64-bit float (the engine then answers null, inf or nan); such a sum
 * reads as the largest number the format holds, never breaking the answer.
 */
export const finiteSum = (value: unknown): number => {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : Number.MAX_VALUE;
};

function toStatsGroup(row: StatsRow): StatsGroup {
  const [p50, p95, p99] = row.latencyPercentiles;
  return {
    key: row.key,
    traceCount: Number(row.traceCount),
    spanCount: Number(row.spanCount),
    errorCount: Number(row.errorCount),
    inputTokens: finiteSum(row.inputTokens),
    outputTokens: finiteSum(row.outputTokens),
    totalTokens: finiteSum(row.totalTokens),
    costUsd: finiteSum(row.costUsd),
    latencyMs: { avg: finiteOrNull(row.latencyAvg), p50: finiteOrNull(p50), p95: finiteOrNull(p95), p99: finiteOrNull(p99) },
    ttftMs: { p50: finiteOrNull(row.ttftPercentiles[0]), p95: finiteOrNull(row.ttftPercentiles[1]) },
  };
}

/**
 * Groups by user, session, tag or name can number as many as the traces: they read a window
 * (default the last 30 days, at most LOUPE_QUERY_MAX_WINDOW_DAYS), reported as from and to.
 * The other groupBys keep their open range (a handful of groups).
 */
export async function getStats(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  asked: StatsQuery,
  limits: QueryLimits = defaultQueryLimits,
): Promise<StatsResult> {
  let query = asked;
  if (windowedGroupBys.has(asked.groupBy)) {
    const window = resolveWindow(asked.from, asked.to, limits, { from: 'from', to: 'to' });
    query = { ...asked, from: window.from, to: window.to };
  }
  const compiled = compileStatsQuery(query);
  const result = await clickhouse.query({
    query: `${compiled.query}\n  ${limitSettings(limits)}`,
    query_params: { ...compiled.params, workspaceId, limit: query.limit },
    format: 'JSONEachRow',
  });
  const rows = await result.json<StatsRow>();
  return { groupBy: query.groupBy, from: query.from ?? null, to: query.to ?? null, groups: rows.map(toStatsGroup) };
}
