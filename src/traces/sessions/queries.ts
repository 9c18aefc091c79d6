import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { limitSettings, type QueryLimits } from '../query-limits.js';
import { toStoredTime } from '../rows.js';
import { traceFilterWhere, type TraceFilter } from '../span-groups.js';

/**
 * The SQL of sessions and users: trace summaries (`traces FINAL`, one live row per trace)
 * grouped by session or user, within a window. No span is read and nothing is joined: a
 * re-sent trace is one summary row, a deleted one none, so the figures are exact at any time
 * without a rollup table to keep in step (docs/decisions/070-sessions-and-users.md).
 *
 * Groups are ordered by their latest activity (a trace's end, or its start while it runs),
 * then by id; pages go on after the last group served (keyset, in HAVING).
 */

/** Figures of a group of traces, by the trace rule of the summaries' usage. */
const figures = `count() AS traceCount,
  sum(ifNull(input_tokens, 0)) AS inputTokens,
  sum(ifNull(output_tokens, 0)) AS outputTokens,
  sum(ifNull(total_tokens, 0)) AS totalTokens,
  sum(ifNull(cost_usd, 0)) AS costUsd,
  sum(error_count) AS errorCount,
  countIf(status = 'error') AS traceErrorCount,
  toString(min(start_time)) AS firstStart,
  max(ifNull(end_time, start_time)) AS activity,
  toString(activity) AS activityKey`;

const groups = {
  session: {
    column: 'session_id',
    select: `session_id AS id, ${figures},
      toString(max(end_time)) AS lastEnd,
      (toUnixTimestamp64Micro(max(end_time)) - toUnixTimestamp64Micro(min(start_time))) / 1000 AS durationMs,
      arraySlice(arraySort(groupUniqArrayIf(user_id, user_id != '')), 1, 5) AS userIds`,
  },
  user: {
    column: 'user_id',
    select: `user_id AS id, ${figures}, uniqExactIf(session_id, session_id != '') AS sessionCount`,
  },
} as const;
export type GroupKind = keyof typeof groups;

interface GroupRowBase {
  id: string;
  traceCount: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
  errorCount: number;
  traceErrorCount: number;
  firstStart: string;
  activityKey: string;
}
export interface SessionRow extends GroupRowBase {
  lastEnd: string | null;
  durationMs: number | null;
  userIds: string[];
}
export interface UserRow extends GroupRowBase {
  sessionCount: number;
}

export interface GroupPageRequest {
  /** The window (startAfter, startBefore) and, for one group, its id (sessionId or userId). */
  filter: TraceFilter;
  /** Only sessions in which this user has a trace in the window. */
  withUser?: string | undefined;
  limit: number;
  after?: { key: string; id: string } | undefined;
  limits: QueryLimits;
}

/** Groups of the window, most recent activity first; one row past the limit tells whether more follow. */
export async function selectGroups<K extends GroupKind>(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  kind: K,
  request: GroupPageRequest,
): Promise<Array<K extends 'session' ? SessionRow : UserRow>> {
  const { column, select } = groups[kind];
  const { where, params } = traceFilterWhere(request.filter);
  const clauses = [where, `${column} != ''`];
  if (request.withUser !== undefined) {
    // A subquery, not a join: the session ids of the user's traces (the user_id bloom filter skips the rest).
    clauses.push(`session_id IN (SELECT session_id FROM traces FINAL WHERE ${where} AND user_id = {withUser:String})`);
    params.withUser = request.withUser;
  }
  let having = '';
  if (request.after) {
    having = `HAVING activity < {afterKey:DateTime64(6, 'UTC')} OR (activity = {afterKey:DateTime64(6, 'UTC')} AND ${column} > {afterId:String})`;
    params.afterKey = request.after.key;
    params.afterId = request.after.id;
  }
  const result = await clickhouse.query({
    query: `SELECT ${select} FROM traces FINAL WHERE ${clauses.join(' AND ')}
            GROUP BY ${column} ${having}
            ORDER BY activity DESC, ${column} ASC LIMIT {fetch:UInt32}
            ${limitSettings(request.limits)}`,
    query_params: { ...params, workspaceId, fetch: request.limit },
    format: 'JSONEachRow',
  });
  return result.json();
}

export interface SessionPageRequest {
  sessionId: string;
  /** The window, ISO 8601: traces starting strictly inside it. */
  window: { from: string; to: string };
  /** Traces after this one in start order (a cursor's key and trace id); the first page starts at the window. */
  after?: { key: string; id: string } | undefined;
  limit: number;
  limits: QueryLimits;
}

export interface SessionPage {
  /** The session's figures in the window; undefined when it has no trace there. */
  summary: SessionRow | undefined;
  rows: Array<{ trace_id: string; item: string; k: string }>;
  more: boolean;
}

/**
 * One session's figures and one page of its traces in start order, in one statement over
 * `session_traces` (clickhouse/0009): the table is sorted by session, so both read that
 * session's summaries only, whatever the size of the workspace; FINAL keeps one live row per
 * trace. The page rides along as an array (a scalar subquery): the embedded engine runs a
 * session's statements one after another, so two statements would pay two fixed costs.
 */
export async function selectSessionPage(clickhouse: ClickHouseClient, workspaceId: string, request: SessionPageRequest): Promise<SessionPage> {
  const live = `workspace_id = {workspaceId:String} AND session_id = {sessionId:String} AND is_deleted = 0
    AND start_time > {startAfter:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')}`;
  const result = await clickhouse.query({
    query: `
      SELECT count() AS traceCount,
        sum(ifNull(input_tokens, 0)) AS inputTokens,
        sum(ifNull(output_tokens, 0)) AS outputTokens,
        sum(ifNull(total_tokens, 0)) AS totalTokens,
        sum(ifNull(cost_usd, 0)) AS costUsd,
        sum(error_count) AS errorCount,
        countIf(status = 'error') AS traceErrorCount,
        toString(min(start_time)) AS firstStart,
        toString(max(ifNull(end_time, start_time))) AS activityKey,
        toString(max(end_time)) AS lastEnd,
        (toUnixTimestamp64Micro(max(end_time)) - toUnixTimestamp64Micro(min(start_time))) / 1000 AS durationMs,
        arraySlice(arraySort(groupUniqArrayIf(user_id, user_id != '')), 1, 5) AS userIds,
        (SELECT groupArray((trace_id, item, toString(start_time)))
         FROM (
           SELECT trace_id, item, start_time FROM session_traces FINAL
           WHERE ${live} AND (start_time, trace_id) > ({afterKey:DateTime64(6, 'UTC')}, {afterId:String})
           ORDER BY start_time, trace_id
           LIMIT {fetch:UInt32}
         )) AS page
      FROM session_traces FINAL
      WHERE ${live}
      ${limitSettings(request.limits)}`,
    query_params: {
      workspaceId,
      sessionId: request.sessionId,
      startAfter: toStoredTime(request.window.from),
      startBefore: toStoredTime(request.window.to),
      afterKey: request.after?.key ?? toStoredTime(request.window.from),
      afterId: request.after?.id ?? '',
      fetch: request.limit + 1,
    },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<Omit<SessionRow, 'id'> & { page: Array<[string, string, string]> }>();
  if (!row || Number(row.traceCount) === 0) return { summary: undefined, rows: [], more: false };
  const { page, ...figures } = row;
  const rows = page.slice(0, request.limit).map(([trace_id, item, k]) => ({ trace_id, item, k }));
  return { summary: { ...figures, id: request.sessionId }, rows, more: page.length > request.limit };
}
