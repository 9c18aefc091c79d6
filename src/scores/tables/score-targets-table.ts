import { z } from 'zod';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { averageRow, targetScoreRowSchema, workspaceId } from './score-params.js';

/**
 * The SQL on `score_targets` (clickhouse/0023): every row of `scores` copied by a materialized
 * view, all its columns, sorted by (workspace, trace, score id); a tombstone hides a deleted
 * score's row and the row a correction moved to another trace. Read with FINAL, tombstones
 * dropped, conditions applied after it: one live row per score, as `scores` gives.
 *
 * It serves every read of the scores of some traces (a trace's, a page's averages, a user's and
 * a session's traces, a dataset run's items) and of some sessions: a trace is a range of the key,
 * a few granules, where `score_summary` (sorted by name first) holds it in every name's range.
 */

/** The columns of `scores`, times as stored. */
export const targetColumns =
  'id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id, span_id, session_id, author_id, ' +
  'config_id, eval_trace_id, timestamp, created_at';

/**
 * The workspace's live scores on the traces `traces` names (an array parameter or a subquery),
 * with all of `targetColumns`. Parameters: `workspaceId` and those of `traces`.
 */
export const scoresOnTraces = (traces: string) => `(
  SELECT ${targetColumns} FROM score_targets FINAL
  WHERE workspace_id = {workspaceId:String} AND trace_id IN ${traces} AND is_deleted = 0)`;

/**
 * The workspace's live scores on the sessions `{sessionIds:Array(String)}` and on the traces
 * `traces` names (a subquery: the sessions' traces): those on the traces by the key, the others
 * of the sessions (a session's own scores, or a score naming the session on a trace outside it)
 * through the index on `session_id`; each score once.
 */
export const scoresOnSessions = (traces: string) => `(
  SELECT ${targetColumns} FROM score_targets FINAL
  WHERE workspace_id = {workspaceId:String} AND trace_id IN (${traces}) AND is_deleted = 0
  UNION ALL
  SELECT ${targetColumns} FROM score_targets FINAL
  WHERE workspace_id = {workspaceId:String} AND session_id IN {sessionIds:Array(String)} AND trace_id NOT IN (${traces})
    AND is_deleted = 0)`;

/**
 * The live traces of some sessions, as `(trace_id, session_id)`: from `session_traces`
 * (clickhouse/0009), sorted by session and exact under FINAL (a trace moved to another session
 * leaves a tombstone under its old one), so a session's rows only. `sessions` an array expression.
 */
export const sessionsTraces = (sessions: string) => `
  SELECT trace_id, session_id FROM session_traces FINAL
  WHERE workspace_id = {workspaceId:String} AND session_id IN ${sessions} AND is_deleted = 0`;

/**
 * The live traces of some users, as `(trace_id, user_id)`: the summaries of their candidate
 * traces (`user_traces`, clickhouse/0011, sorted by user: a superset) read by the key, the user
 * checked on the live summary. `users` an array expression.
 */
export const usersTraces = (users: string) => `
  SELECT trace_id, user_id FROM traces FINAL
  WHERE workspace_id = {workspaceId:String}
    AND trace_id IN (SELECT trace_id FROM user_traces WHERE workspace_id = {workspaceId:String} AND user_id IN ${users})
    AND user_id IN ${users} AND is_deleted = 0`;

/**
 * Whether the workspace holds any row (a live score or a tombstone): the first granule of its
 * key range, so close to nothing. No row: no average anywhere in the workspace.
 */
export const selectAnyScoreRow = defineQuery({
  name: 'selectAnyScoreRow',
  params: z.object({ workspaceId }),
  row: z.object({ held: z.coerce.number() }),
  sql: (values) => ({
    values,
    query: `SELECT count() AS held FROM (SELECT 1 FROM score_targets WHERE workspace_id = {workspaceId:String} LIMIT 1)`,
  }),
});

/** The live scores on the traces and their spans, oldest first. */
export const selectScoresOfTrace = defineQuery({
  name: 'selectScoresOfTrace',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: targetScoreRowSchema,
  sql: (values) => ({
    values,
    query: `SELECT id, name, data_type, value, string_value, comment, source, author_id, trace_id, span_id,
        toString(timestamp) AS timestamp_text
      FROM ${scoresOnTraces('{traceIds:Array(String)}')} ORDER BY timestamp, id`,
  }),
});

/** Per trace and score name, the count and mean of the live scores on the trace or its spans. */
export const selectAveragesOfTraces = defineQuery({
  name: 'selectAveragesOfTraces',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: averageRow,
  sql: (values) => ({
    values,
    query: `SELECT trace_id AS key, name, count() AS n, avg(value) AS mean FROM ${scoresOnTraces('{traceIds:Array(String)}')}
      GROUP BY key, name ORDER BY key, name`,
  }),
});

/** Per user and score name, over the live scores on the user's traces. */
export const selectAveragesOfUsers = defineQuery({
  name: 'selectAveragesOfUsers',
  params: z.object({ workspaceId, userIds: z.array(z.string()).min(1) }),
  row: averageRow,
  sql: (values) => ({
    values,
    query: `
      WITH user_of AS (${usersTraces('{userIds:Array(String)}')})
      SELECT u.user_id AS key, s.name AS name, count() AS n, avg(s.value) AS mean
      FROM ${scoresOnTraces('(SELECT trace_id FROM user_of)')} AS s INNER JOIN user_of AS u ON s.trace_id = u.trace_id
      GROUP BY key, name ORDER BY key, name`,
  }),
});

/**
 * Per session and score name, over the scores on the session and on its traces: a score naming
 * a session counts for that session, any other on a trace of the session for it.
 */
export const selectAveragesOfSessions = defineQuery({
  name: 'selectAveragesOfSessions',
  params: z.object({ workspaceId, sessionIds: z.array(z.string()).min(1) }),
  row: averageRow,
  sql: (values) => ({
    values,
    query: `
      WITH session_of AS (${sessionsTraces('{sessionIds:Array(String)}')})
      SELECT if(s.session_id != '', s.session_id, t.session_id) AS key, s.name AS name, count() AS n, avg(s.value) AS mean
      FROM ${scoresOnSessions('SELECT trace_id FROM session_of')} AS s
      LEFT JOIN session_of AS t ON s.trace_id = t.trace_id AND s.trace_id != ''
      WHERE key IN {sessionIds:Array(String)}
      GROUP BY key, name ORDER BY key, name`,
  }),
});

/** Per trace and score name, the data type, count and mean of the live scores on the trace or its spans (run items' scores). */
export const selectScoreValuesOfTraces = defineQuery({
  name: 'selectScoreValuesOfTraces',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: z.object({
    trace_id: z.string(),
    name: z.string(),
    data_type: z.enum(['numeric', 'categorical', 'boolean']),
    n: z.coerce.number(),
    mean: z.number(),
    /** The scores' string values (categories, `true`/`false`, '' for numeric): the alias `data_type` is the aggregate here. */
    labels: z.array(z.string()),
  }),
  sql: (values) => ({
    values,
    query: `SELECT trace_id, name, any(data_type) AS data_type, count() AS n, avg(value) AS mean, groupArray(string_value) AS labels
      FROM ${scoresOnTraces('{traceIds:Array(String)}')} GROUP BY trace_id, name ORDER BY trace_id, name`,
  }),
});
