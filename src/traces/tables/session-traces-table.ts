import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { sessionFigures, sessionGroupRow, type PreviousSummary, type TraceSummaryRow } from './traces-table.js';
import { workspaceId } from './params.js';

/**
 * The SQL on `session_traces` (clickhouse/0009): the summary rows of traces with a session,
 * sorted by `(workspace_id, session_id, trace_id)`, copied from `traces` by a materialized
 * view. One session's reads touch that session's rows only, whatever its size.
 */

/**
 * Tombstones of the rows of traces a later payload moved to another session: the table's key
 * holds the session, so the new summary row, copied under its new session, does not replace
 * the row under the old one.
 */
export async function tombstoneLeftSessions(
  clickhouse: ClickHouseClient,
  previous: PreviousSummary[],
  rows: TraceSummaryRow[],
): Promise<void> {
  const sessionBefore = new Map(previous.map((p) => [p.trace_id, p.session_id]));
  const left = rows.flatMap((row) => {
    const before = sessionBefore.get(row.trace_id);
    if (before === undefined || before === '' || before === row.session_id) return [];
    return [
      {
        workspace_id: row.workspace_id,
        session_id: before,
        trace_id: row.trace_id,
        start_time: row.start_time,
        error_count: 0,
        version: row.version,
        is_deleted: 1,
      },
    ];
  });
  if (left.length > 0) await clickhouse.insert({ table: 'session_traces', values: left, format: 'JSONEachRow' });
}

const storedTime = z.string().regex(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$/);

/**
 * One session's figures in a window (traces starting strictly inside it) and one page of its
 * traces in start order (ties by trace id), strictly after `after` (a cursor's start time and
 * trace id; the first page passes the window's start and ''), in one statement: the page rides
 * along as an array (a scalar subquery), since the embedded engine runs a session's statements
 * one after another and two would pay two fixed costs. FINAL keeps one live row per trace.
 * An aggregate without GROUP BY always answers one row: `traceCount` 0 when the session has no
 * trace in the window.
 */
export const selectSessionPage = defineQuery({
  name: 'selectSessionPage',
  params: z.object({
    workspaceId,
    sessionId: z.string(),
    startAfter: storedTime,
    startBefore: storedTime,
    afterKey: storedTime,
    afterId: z.string(),
    fetch: z.number().int().min(1),
  }),
  // A session group's figures (traces-table.ts, `sessionFigures`), without its id, and the page.
  row: sessionGroupRow.omit({ id: true }).extend({
    page: z.array(z.tuple([z.string(), z.string(), z.string()]).transform(([trace_id, item, k]) => ({ trace_id, item, k }))),
  }),
  sql: (values) => ({
    values,
    query: `
      SELECT ${sessionFigures},
        (SELECT groupArray((trace_id, item, toString(start_time)))
         FROM (
           SELECT trace_id, item, start_time FROM session_traces FINAL
           WHERE workspace_id = {workspaceId:String} AND session_id = {sessionId:String} AND is_deleted = 0
             AND start_time > {startAfter:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')}
             AND (start_time, trace_id) > ({afterKey:DateTime64(6, 'UTC')}, {afterId:String})
           ORDER BY start_time, trace_id
           LIMIT {fetch:UInt32}
         )) AS page
      FROM session_traces FINAL
      WHERE workspace_id = {workspaceId:String} AND session_id = {sessionId:String} AND is_deleted = 0
        AND start_time > {startAfter:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')}`,
  }),
});
