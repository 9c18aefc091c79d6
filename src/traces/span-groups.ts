import { toStoredTime } from './rows.js';

/**
 * SQL fragments shared by the stats and analytics queries. Every figure is computed in the
 * engine over deduplicated rows.
 *
 * Span-level figures (by model, provider or kind) read the `by_model`, `by_provider` and
 * `by_kind` columns of the trace summaries (clickhouse/0001): each trace's spans already
 * grouped per dimension when the summary was recomputed at ingest, usage counted by the rule
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
}

export interface CompiledQuery {
  query: string;
  params: Record<string, unknown>;
}

export const isLlm = "startsWith(kind, 'llm.')";
export const usageColumns = ['input_tokens', 'output_tokens', 'total_tokens', 'cost_usd'] as const;

/**
 * The workspace's live trace summaries, filtered, as parameterized fragments. FINAL keeps
 * each trace's newest row and drops deleted ones; it reads one row per trace.
 */
export function traceRows(filter: TraceFilter, arrayJoin = ''): CompiledQuery {
  const clauses = ['workspace_id = {workspaceId:String}', 'is_deleted = 0'];
  const params: Record<string, unknown> = {};
  if (filter.startFrom !== undefined) {
    clauses.push("start_time >= {startFrom:DateTime64(6, 'UTC')}");
    params.startFrom = toStoredTime(filter.startFrom);
  }
  if (filter.startAfter !== undefined) {
    clauses.push("start_time > {startAfter:DateTime64(6, 'UTC')}");
    params.startAfter = toStoredTime(filter.startAfter);
  }
  if (filter.startBefore !== undefined) {
    clauses.push("start_time < {startBefore:DateTime64(6, 'UTC')}");
    params.startBefore = toStoredTime(filter.startBefore);
  }
  if (filter.sessionId !== undefined) {
    clauses.push('session_id = {sessionId:String}');
    params.sessionId = filter.sessionId;
  }
  return { query: `traces FINAL ${arrayJoin} WHERE ${clauses.join(' AND ')}`, params };
}

/** One span as the group expressions read it, collected per trace with groupArray. */
export const spanGroupFields = `(model, provider, kind, status = 'error', ifNull(input_tokens, 0), ifNull(output_tokens, 0),
  ifNull(total_tokens, 0), ifNull(cost_usd, 0), duration_ms, ${isLlm})`;

const groupType =
  'Tuple(key LowCardinality(String), spans UInt32, errors UInt32, input_tokens Float64, output_tokens Float64, ' +
  'total_tokens Float64, cost_usd Float64, durations Array(Float64))';

/**
 * A trace's spans (an array of `spanGroupFields`) grouped by one dimension, keys sorted: per
 * group the span and error counts, the usage that counts (a generation span's always, another
 * kind's only when the trace has no generation span), and every duration for exact quantiles.
 */
export function spanGroupsOf(dimension: Dimension, spans: string, traceHasLlm: string): string {
  const field = { model: 1, provider: 2, kind: 3 }[dimension];
  const inGroup = `x.${field} = k`;
  const counted = (i: number) => `arraySum(x -> if(${inGroup} AND (x.10 OR NOT ${traceHasLlm}), x.${i}, 0), ${spans})`;
  return `arrayMap(k -> CAST((k, toUInt32(arrayCount(x -> ${inGroup}, ${spans})), toUInt32(arrayCount(x -> ${inGroup} AND x.4, ${spans})),
    ${counted(5)}, ${counted(6)}, ${counted(7)}, ${counted(8)}, arrayMap(x -> x.9, arrayFilter(x -> ${inGroup}, ${spans}))), '${groupType}'),
    arraySort(arrayDistinct(arrayMap(x -> x.${field}, ${spans}))))`;
}
