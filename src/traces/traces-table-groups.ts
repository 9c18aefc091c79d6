import { z } from 'zod';
import { defineQuery } from '../stores/clickhouse-query.js';
import { traceFilterSchema, traceSummaryFilter } from './traces-table.js';

/**
 * Sessions and users: trace summaries (`traces FINAL`, one live row per trace) grouped by
 * session or user, within a window. No span is read and nothing is joined: a re-sent trace is
 * one summary row, a deleted one none, so the figures are exact at any time without a rollup
 * table to keep in step (docs/decisions/070-sessions-and-users.md). Figures follow the trace
 * rule of the summaries' usage; `errorCount` counts spans with status error, `traceErrorCount`
 * traces.
 *
 * Groups are ordered by their latest activity (a trace's end, or its start while it runs),
 * then by id; a page goes on strictly after the last group served (keyset, in HAVING). One
 * session's figures and page are read from `session_traces` (session-traces-table.ts).
 */

const groupPageParams = z.object({
  workspaceId: z.string().min(1),
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
const afterValues = (after: { key: string; id: string } | undefined) => after && { afterKey: after.key, afterId: after.id };

/**
 * Sessions of the window, most recent activity first; with `withUser`, only the sessions in
 * which that user has a trace in the window (a subquery, not a join: the session ids of the
 * user's traces; the user_id bloom filter skips the rest), each with all its figures.
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
        : `AND session_id IN (SELECT session_id FROM traces FINAL WHERE ${where} AND user_id = {withUser:String})`;
    return {
      values: { ...values, workspaceId, fetch, ...(withUser !== undefined && { withUser }), ...afterValues(after) },
      query: `
        SELECT session_id AS id,
          count() AS traceCount,
          sum(ifNull(input_tokens, 0)) AS inputTokens,
          sum(ifNull(output_tokens, 0)) AS outputTokens,
          sum(ifNull(total_tokens, 0)) AS totalTokens,
          sum(ifNull(cost_usd, 0)) AS costUsd,
          sum(error_count) AS errorCount,
          countIf(status = 'error') AS traceErrorCount,
          toString(min(start_time)) AS firstStart,
          max(ifNull(end_time, start_time)) AS activity,
          toString(activity) AS activityKey,
          toString(max(end_time)) AS lastEnd,
          (toUnixTimestamp64Micro(max(end_time)) - toUnixTimestamp64Micro(min(start_time))) / 1000 AS durationMs,
          arraySlice(arraySort(groupUniqArrayIf(user_id, user_id != '')), 1, 5) AS userIds
        FROM traces FINAL
        WHERE ${where} AND session_id != '' ${ofUser}
        GROUP BY session_id
        ${after ? afterGroup('session_id') : ''}
        ORDER BY activity DESC, session_id ASC
        LIMIT {fetch:UInt32}`,
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
    return {
      values: { ...values, workspaceId, fetch, ...afterValues(after) },
      query: `
        SELECT user_id AS id,
          count() AS traceCount,
          sum(ifNull(input_tokens, 0)) AS inputTokens,
          sum(ifNull(output_tokens, 0)) AS outputTokens,
          sum(ifNull(total_tokens, 0)) AS totalTokens,
          sum(ifNull(cost_usd, 0)) AS costUsd,
          sum(error_count) AS errorCount,
          countIf(status = 'error') AS traceErrorCount,
          toString(min(start_time)) AS firstStart,
          max(ifNull(end_time, start_time)) AS activity,
          toString(activity) AS activityKey,
          uniqExactIf(session_id, session_id != '') AS sessionCount
        FROM traces FINAL
        WHERE ${where} AND user_id != ''
        GROUP BY user_id
        ${after ? afterGroup('user_id') : ''}
        ORDER BY activity DESC, user_id ASC
        LIMIT {fetch:UInt32}`,
    };
  },
});
