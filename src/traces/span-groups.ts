import { toStoredTime } from './rows.js';

/**
 * SQL fragments shared by the stats and analytics queries. Every figure is computed in the
 * engine over deduplicated rows.
 *
 * Span-level figures (by model, provider or kind) read `trace_rollups` (clickhouse/0003): one
 * row per trace holding its spans already grouped per dimension, usage counted by the rule of
 * DESIGN.md (generation spans only, other kinds only in a trace without one). So a span
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
 * The workspace's live rows of a one-row-per-trace table (`traces` or `trace_rollups`, both
 * carrying the trace's start_time and session_id), filtered, as parameterized fragments.
 * FINAL keeps each trace's newest row and drops deleted ones; on these tables it reads one
 * row per trace.
 */
export function traceRows(table: 'traces' | 'trace_rollups', filter: TraceFilter, arrayJoin = ''): CompiledQuery {
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
  return { query: `${table} FINAL ${arrayJoin} WHERE ${clauses.join(' AND ')}`, params };
}
