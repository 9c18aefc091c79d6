import { toStoredTime } from './rows.js';

/**
 * SQL fragments shared by the span-level aggregates (stats by model, provider or kind, and the
 * analytics cost breakdown). Every figure is computed in the engine over deduplicated rows.
 *
 * Two rules make span-level figures agree with the trace summaries:
 * - A span belongs to a range by its trace's start time (the earliest start of the trace's
 *   live spans, exactly what `traces.start_time` holds) and to a session by its trace's
 *   session (the newest non-empty one, as in the summary). Both are trace-level facts, so the
 *   spans are first grouped per (trace, dimension) and a window over the trace supplies them.
 * - Usage (tokens, cost) of a span counts when it is a generation span (`llm.*`), or when its
 *   trace has no generation span at all (DESIGN.md, Traces): an agent span repeating its
 *   children's usage is never counted twice. The window supplies "trace has an llm.* span".
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

/** Filters on a trace-level start time and session column, as parameterized fragments. */
export function traceConditions(filter: TraceFilter, startColumn: string, sessionColumn: string) {
  const clauses: string[] = [];
  const params: Record<string, unknown> = {};
  if (filter.startFrom !== undefined) {
    clauses.push(`${startColumn} >= {startFrom:DateTime64(6, 'UTC')}`);
    params.startFrom = toStoredTime(filter.startFrom);
  }
  if (filter.startAfter !== undefined) {
    clauses.push(`${startColumn} > {startAfter:DateTime64(6, 'UTC')}`);
    params.startAfter = toStoredTime(filter.startAfter);
  }
  if (filter.startBefore !== undefined) {
    clauses.push(`${startColumn} < {startBefore:DateTime64(6, 'UTC')}`);
    params.startBefore = toStoredTime(filter.startBefore);
  }
  if (filter.sessionId !== undefined) {
    clauses.push(`${sessionColumn} = {sessionId:String}`);
    params.sessionId = filter.sessionId;
  }
  return { clauses, params };
}

/**
 * One row per (trace, dimension values) of the workspace's live spans, with the trace-level
 * facts from a window over the trace. FINAL deduplicates re-sent spans and drops deleted
 * ones. With a session filter, only traces that ever had a span in that session are read
 * (the skip index on `spans.session_id` serves that subquery); the exact session test is
 * made on the trace's current session afterwards.
 */
export function spanGroupsPerTrace(dimensions: readonly Dimension[], filter: TraceFilter): CompiledQuery {
  const usage = usageColumns
    .map((c) => `sumIf(ifNull(${c}, 0), ${isLlm}) AS llm_${c}, sum(ifNull(${c}, 0)) AS any_${c}`)
    .join(',\n      ');
  const sessionPrefilter =
    filter.sessionId === undefined
      ? ''
      : `AND trace_id IN (SELECT trace_id FROM spans WHERE workspace_id = {workspaceId:String} AND session_id = {sessionId:String})`;
  const inner = `
    SELECT trace_id, ${dimensions.join(', ')},
      count() AS spans,
      countIf(status = 'error') AS errors,
      ${usage},
      groupArray(duration_ms) AS durations,
      min(min(start_time)) OVER per_trace AS trace_start,
      max(countIf(${isLlm})) OVER per_trace AS trace_llm_spans,
      argMax(argMaxIf(session_id, version, session_id != ''), maxIf(version, session_id != '')) OVER per_trace AS trace_session
    FROM spans FINAL
    WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 ${sessionPrefilter}
    GROUP BY trace_id, ${dimensions.join(', ')}
    WINDOW per_trace AS (PARTITION BY trace_id)`;
  const { clauses, params } = traceConditions(filter, 'trace_start', 'trace_session');
  const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
  return { query: `(${inner}\n  ) ${where}`, params };
}

/** A usage sum over per-trace groups: generation spans only when the trace has any. */
export const countedUsage = (column: (typeof usageColumns)[number]) =>
  `sum(if(trace_llm_spans > 0, llm_${column}, any_${column}))`;
