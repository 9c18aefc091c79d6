import { z } from 'zod';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { afterValues } from '../model/cursor.js';
import { traceFilterSchema, traceSummaryFilter, userTraceCandidates } from './traces-table.js';
import { workspaceId } from './params.js';

/**
 * Sessions and users: trace summaries (`traces FINAL`, one live row per trace) grouped by
 * session or user, within a window. No span is read and nothing is joined: a re-sent trace is
 * one summary row, a deleted one none, so the figures are exact at any time without a rollup
 * table to keep in step (docs/decisions/070-sessions-and-users.md). Figures follow the trace
 * rule of the summaries' usage; `errorCount` counts spans with status error, `traceErrorCount`
 * traces.
 *
 * Groups are ordered by their latest activity (a trace's end, or its start while it runs),
 * then by id; a page goes on strictly after the last group served (keyset, in HAVING).
 *
 * A page is one statement in two steps. The inner step picks the page's groups from the
 * window's summaries reading only the group id and the times: a group's latest activity is all
 * its order needs. The outer step computes the figures of those groups alone (an `IN` set, not
 * a join). Computing every figure of every group of the window (a hash table of a hundred
 * thousand sessions with their user sets, or of users with their session sets) cost twice to
 * three times as much at 10M spans (docs/benchmarks.md). A session's figures come from
 * `session_traces`, sorted by session, so they are key reads; a user's from `traces`.
 * One session's figures and page are read from `session_traces` (session-traces-table.ts).
 */

const groupPageParams = z.object({
  workspaceId,
  /** The window (startAfter, startBefore) and, for one group, its id (sessionId or userId). */
  filter: traceFilterSchema,
  /** Rows to fetch: one past the page tells whether more follow. */
  fetch: z.number().int().min(1),
  after: z.object({ key: z.string(), id: z.string() }).optional(),
});

const groupFigures = {
  id: z.string(),
  traceCount: z.number(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  costUsd: z.number(),
  errorCount: z.number(),
  traceErrorCount: z.number(),
  /** Stored times ('YYYY-MM-DD hh:mm:ss.ffffff', UTC). */
  firstStart: z.string(),
  activityKey: z.string(),
};

export const sessionGroupRow = z.object({
  ...groupFigures,
  lastEnd: z.string().nullable(),
  durationMs: z.number().nullable(),
  userIds: z.array(z.string()),
});
export type SessionRow = z.output<typeof sessionGroupRow>;

export const userGroupRow = z.object({ ...groupFigures, sessionCount: z.number() });
export type UserRow = z.output<typeof userGroupRow>;

/** The keyset condition of a page after a group: older activity, or the same and a higher id. */
const afterGroup = (column: string) =>
  `HAVING activity < {afterKey:DateTime64(6, 'UTC')} OR (activity = {afterKey:DateTime64(6, 'UTC')} AND ${column} > {afterId:String})`;

/** The group figures both lists give, over the rows of one statement. */
const sharedFigures = `count() AS traceCount,
          sum(ifNull(input_tokens, 0)) AS inputTokens,
          sum(ifNull(output_tokens, 0)) AS outputTokens,
          sum(ifNull(total_tokens, 0)) AS totalTokens,
          sum(ifNull(cost_usd, 0)) AS costUsd,
          sum(error_count) AS errorCount,
          countIf(status = 'error') AS traceErrorCount,
          toString(min(start_time)) AS firstStart,
          max(ifNull(end_time, start_time)) AS activity,
          toString(activity) AS activityKey`;

/** A session's figures (`sessionGroupRow` without its id), over its rows of one statement: also one session's (session-traces-table.ts). */
export const sessionFigures = `${sharedFigures},
          toString(max(end_time)) AS lastEnd,
          (toUnixTimestamp64Micro(max(end_time)) - toUnixTimestamp64Micro(min(start_time))) / 1000 AS durationMs,
          arraySlice(arraySort(groupUniqArrayIf(user_id, user_id != '')), 1, 5) AS userIds`;

/**
 * The ids of one page of groups (the inner step): each group's latest activity in the window,
 * ordered, after the cursor's group, `fetch` of them.
 */
function pageOfGroups(column: 'session_id' | 'user_id', where: string, after: boolean): string {
  return `SELECT id FROM (
          SELECT ${column} AS id, max(ifNull(end_time, start_time)) AS activity
          FROM traces FINAL
          WHERE ${where} AND ${column} != ''
          GROUP BY ${column}
          ${after ? afterGroup(column) : ''}
          ORDER BY activity DESC, id ASC
          LIMIT {fetch:UInt32})`;
}

/**
 * Sessions of the window, most recent activity first; with `withUser`, only the sessions in
 * which that user has a trace in the window (a subquery, not a join: the session ids of the
 * user's traces, read through its candidate traces), each with all its figures.
 */
export const selectSessionGroups = defineQuery({
  name: 'selectSessionGroups',
  params: groupPageParams.extend({ withUser: z.string().optional() }),
  row: sessionGroupRow,
  sql: ({ workspaceId, filter, fetch, after, withUser }) => {
    const { where, values } = traceSummaryFilter(filter);
    const ofUser =
      withUser === undefined
        ? ''
        : ` AND session_id IN (SELECT session_id FROM traces FINAL WHERE ${where} AND user_id = {withUser:String}
            AND trace_id IN (${userTraceCandidates('{withUser:String}')}))`;
    // session_traces holds the summary columns the window filter reads (workspace, time, is_deleted).
    return {
      values: { ...values, workspaceId, fetch, ...(withUser !== undefined && { withUser }), ...afterValues(after) },
      query: `
        SELECT session_id AS id,
          ${sessionFigures}
        FROM session_traces FINAL
        WHERE ${where} AND session_id IN (${pageOfGroups('session_id', where + ofUser, after !== undefined)})
        GROUP BY session_id
        ORDER BY activity DESC, session_id ASC`,
    };
  },
});

/** Users of the window (or one user, by the filter's userId), most recent activity first. */
export const selectUserGroups = defineQuery({
  name: 'selectUserGroups',
  params: groupPageParams,
  row: userGroupRow,
  sql: ({ workspaceId, filter, fetch, after }) => {
    const { where, values } = traceSummaryFilter(filter);
    // One user (its page is itself): one pass over that user's summaries.
    const ofPage = filter.userId === undefined ? `user_id IN (${pageOfGroups('user_id', where, after !== undefined)})` : "user_id != ''";
    return {
      values: { ...values, workspaceId, fetch, ...afterValues(after) },
      query: `
        SELECT user_id AS id,
          ${sharedFigures},
          uniqExactIf(session_id, session_id != '') AS sessionCount
        FROM traces FINAL
        WHERE ${where} AND ${ofPage}
        GROUP BY user_id
        ${after && filter.userId !== undefined ? afterGroup('user_id') : ''}
        ORDER BY activity DESC, user_id ASC
        LIMIT {fetch:UInt32}`,
    };
  },
});
