import { toStoredTime } from './rows.js';

/**
 * SQL fragments shared by the stats and analytics queries. Every figure is computed in the
 * engine over deduplicated rows.
 *
 * Span-level figures (by model, provider or kind) read the `by_model`, `by_provider` and
 * `by_kind` columns of the trace summaries (clickhouse/0001): each trace's spans already
 * grouped per dimension when the summary was recomputed at ingest (summary.ts), usage counted by the rule
 * of DESIGN.md (generation spans only, other kinds only in a trace without one). So a span
 * belongs to a range by its trace's start time and to a session by its trace's session, like
 * the trace-level figures, and a wide aggregate reads one row per trace, not one per span.
 */

export type Dimension = 'model' | 'provider' | 'kind';

export interface TraceFilter {
  /** Inclusive lower bound of the trace's start time, ISO 8601. */
  startFrom?: string | undefined;
  /** Strict lower bound (a trace starting after this time). */
  startAfter?: string | undefined;
  /** Strict upper bound (a trace starting before this time). */
  startBefore?: string | undefined;
  sessionId?: string | undefined;
  status?: string | undefined;
  source?: string | undefined;
  environment?: string | undefined;
  service?: string | undefined;
  userId?: string | undefined;
  /** Every one of these tags is on the trace. */
  tags?: string[] | undefined;
  name?: string | undefined;
  /** The trace's model (the one its list item shows). */
  model?: string | undefined;
  minDurationMs?: number | undefined;
  minCostUsd?: number | undefined;
}

export interface CompiledQuery {
  query: string;
  params: Record<string, unknown>;
}


/**
 * The WHERE clause over the workspace's live trace summaries, as parameterized fragments: the
 * list, the stats and the analytics filter traces alike. Read with FINAL, so a filter sees only
 * each trace's newest row.
 */
export function traceFilterWhere(filter: TraceFilter): { where: string; params: Record<string, unknown> } {
  const clauses = ['workspace_id = {workspaceId:String}', 'is_deleted = 0'];
  const params: Record<string, unknown> = {};
  const times = [
    ['startFrom', '>='],
    ['startAfter', '>'],
    ['startBefore', '<'],
  ] as const;
  for (const [name, operator] of times) {
    const value = filter[name];
    if (value === undefined) continue;
    clauses.push(`start_time ${operator} {${name}:DateTime64(6, 'UTC')}`);
    params[name] = toStoredTime(value);
  }
  const equal = [
    ['sessionId', 'session_id'], ['status', 'status'], ['source', 'source'], ['environment', 'environment'],
    ['userId', 'user_id'], ['name', 'name'], ['model', 'model'], ['service', 'service'],
  ] as const;
  for (const [name, column] of equal) {
    const value = filter[name];
    if (value === undefined) continue;
    clauses.push(`${column} = {${name}:String}`);
    params[name] = value;
  }
  if (filter.tags !== undefined && filter.tags.length > 0) {
    clauses.push('hasAll(tags, {tags:Array(String)})');
    params.tags = filter.tags;
  }
  // A running trace has no duration and a trace without usage no cost: neither passes a minimum.
  for (const [name, column] of [['minDurationMs', 'duration_ms'], ['minCostUsd', 'cost_usd']] as const) {
    const value = filter[name];
    if (value === undefined) continue;
    clauses.push(`${column} >= {${name}:Float64}`);
    params[name] = value;
  }
  return { where: clauses.join(' AND '), params };
}

/** The workspace's live trace summaries, filtered; FINAL reads one row per trace. */
export function traceRows(filter: TraceFilter, arrayJoin = ''): CompiledQuery {
  const { where, params } = traceFilterWhere(filter);
  return { query: `traces FINAL ${arrayJoin} WHERE ${where}`, params };
}

/**
 * The figures of a set of trace summaries, the same in stats by source and in the analytics
 * totals: counts, the usage sums (already by the trace rule), and trace-duration latency.
 */
export function traceFigures(levels: string): string {
  return `count() AS traceCount,
    sum(span_count) AS spanCount,
    countIf(status = 'error') AS errorCount,
    sum(ifNull(input_tokens, 0)) AS inputTokens,
    sum(ifNull(output_tokens, 0)) AS outputTokens,
    sum(ifNull(total_tokens, 0)) AS totalTokens,
    sum(ifNull(cost_usd, 0)) AS costUsd,
    avg(duration_ms) AS latencyAvg,
    quantilesExactInclusive(${levels})(duration_ms) AS latencyPercentiles,
    ${ttftPercentiles('arrayMap(x -> x.4, ttfts)')}`;
}

/**
 * TTFT p50 and p95 over the spans' times to first token (`traces.ttfts`, clickhouse/0005),
 * exact like the latencies; `values` is an array expression per trace row.
 */
export const ttftPercentiles = (values: string) => `quantilesExactInclusiveArray(0.5, 0.95)(${values}) AS ttftPercentiles`;
