import type { ClickHouseClient } from '../stores/clickhouse.js';
import { nextVersion, type SpanRow } from './rows.js';
import { summarizeTraces, type PreviousSummary, type SpanFacts, type TraceSummaryRow } from './summary.js';

/**
 * The trace store's SQL. Every statement is led by `workspace_id = {workspaceId:String}`,
 * the first column of both sorting keys, so no read or write crosses a workspace.
 *
 * Inserts wait for the write (no async insert) and, on a cluster, for the Distributed table
 * to hand the rows to their shard (`insert_distributed_sync`, stores/clickhouse.ts): the
 * summary recomputed right after must see them.
 */
/**
 * Reads of a few traces by primary key: more threads only add start-up cost. In the
 * statement, not in clickhouse_settings: the embedded session would keep it for every later
 * query (stores/clickhouse.ts).
 */
const keyReadSettings = 'SETTINGS max_threads = 1';

export async function insertSpanRows(clickhouse: ClickHouseClient, rows: SpanRow[]): Promise<void> {
  if (rows.length === 0) return;
  await clickhouse.insert({ table: 'spans', values: rows, format: 'JSONEachRow' });
}

/**
 * Recomputes the summary rows of the given traces from their deduplicated live spans: one
 * key read of the narrow span columns and of the previous summaries (a read bounded by the
 * primary key), the rules applied in summary.ts, one plain insert. Spans are deduplicated
 * with LIMIT 1 BY over the few columns the summary needs (about 1.7x faster than FINAL for a
 * hundred traces spread over many parts; every version of a span sits on one shard, so this is
 * exact on a cluster too). The previous summary remembers trace-level values whose spans have
 * since been re-sent without them.
 */
export async function recomputeTraceSummaries(clickhouse: ClickHouseClient, workspaceId: string, traceIds: string[]) {
  if (traceIds.length === 0) return;
  const result = await clickhouse.query({
    query: `
      SELECT
        (SELECT groupArray(tuple(trace_id, toString(version), name, session_id, environment, service, user_id, tags))
         FROM (
           SELECT trace_id, version, name, session_id, environment, service, user_id, tags, is_deleted
           FROM traces
           WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)}
           ORDER BY version DESC
           LIMIT 1 BY trace_id
         )
         WHERE is_deleted = 0) AS previous,
        groupArray(tuple(trace_id, span_id, toString(version), trace_name, session_id, environment, service, user_id, tags,
          source, parent_span_id, status, kind, toString(start_time), toString(end_time), duration_ms, model, provider,
          input_tokens, output_tokens, total_tokens, cost_usd, cost_source, ttft_ms)) AS spans
      FROM (
        SELECT trace_id, span_id, version, is_deleted, trace_name, session_id, environment, service, user_id, tags, source,
          parent_span_id, status, kind, start_time, end_time, duration_ms, model, provider,
          input_tokens, output_tokens, total_tokens, cost_usd, cost_source, ttft_ms
        FROM spans
        WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)}
        ORDER BY version DESC
        LIMIT 1 BY trace_id, span_id
      )
      WHERE is_deleted = 0 ${keyReadSettings}`,
    query_params: { workspaceId, traceIds },
    format: 'JSONCompactEachRow',
  });
  const [row] = await result.json<[PreviousTuple[], SpanTuple[]]>();
  const previous = (row?.[0] ?? []).map(previousOf);
  const rows = summarizeTraces(workspaceId, (row?.[1] ?? []).map(spanFactsOf), previous, nextVersion().toString());
  if (rows.length === 0) return;
  await clickhouse.insert({ table: 'traces', values: rows, format: 'JSONEachRow' });
  const moved = leftSessions(previous, rows);
  if (moved.length > 0) await clickhouse.insert({ table: 'session_traces', values: moved, format: 'JSONEachRow' });
}

/**
 * Tombstones of the `session_traces` rows (clickhouse/0009) of traces a later payload moved to
 * another session: that table's key holds the session, so the new summary row, copied there
 * under its new session, does not replace the row under the old one.
 */
function leftSessions(previous: PreviousSummary[], rows: TraceSummaryRow[]) {
  const sessionBefore = new Map(previous.map((p) => [p.trace_id, p.session_id]));
  return rows.flatMap((row) => {
    const before = sessionBefore.get(row.trace_id);
    if (before === undefined || before === '' || before === row.session_id) return [];
    return [{ workspace_id: row.workspace_id, session_id: before, trace_id: row.trace_id, start_time: row.start_time, error_count: 0, version: row.version, is_deleted: 1 }];
  });
}

type PreviousTuple = [string, string, string, string, string, string, string, string[]];
type SpanTuple = [
  string, string, string, string, string, string, string, string, string[], string, string, string, string, string, string,
  number, string, string, number | null, number | null, number | null, number | null, string, number | null,
];

const previousOf = ([trace_id, version, name, session_id, environment, service, user_id, tags]: PreviousTuple): PreviousSummary => ({
  trace_id, version, name, session_id, environment, service, user_id, tags,
});

function spanFactsOf(t: SpanTuple): SpanFacts {
  const [trace_id, span_id, version, trace_name, session_id, environment, service, user_id, tags, source, parent_span_id, status, kind] = t;
  return {
    trace_id, span_id, version, trace_name, session_id, environment, service, user_id, tags, source, parent_span_id, status, kind,
    start_time: t[13], end_time: t[14], duration_ms: t[15], model: t[16], provider: t[17],
    input_tokens: t[18], output_tokens: t[19], total_tokens: t[20], cost_usd: t[21], cost_source: t[22], ttft_ms: t[23],
  };
}

/** Whether the trace has a live summary: a read of the key columns only. */
export async function traceExists(clickhouse: ClickHouseClient, workspaceId: string, traceId: string): Promise<boolean> {
  const result = await clickhouse.query({
    query: `SELECT 1 FROM traces FINAL
            WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0 ${keyReadSettings}`,
    query_params: { workspaceId, traceId },
    format: 'JSONEachRow',
  });
  return (await result.json()).length > 0;
}

/**
 * One trace's list item with the details of all its live spans in start order, in one
 * statement: the embedded engine runs a session's statements one after another, so two reads
 * would cost two statements' fixed cost; here the spans ride along as an array (a scalar
 * subquery, also bounded by the primary key). Both reads take the key columns and one text
 * column each (clickhouse/0003).
 */
export async function findTraceWithSpans(clickhouse: ClickHouseClient, workspaceId: string, traceId: string) {
  const live = 'workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0';
  const result = await clickhouse.query({
    query: `SELECT item,
              (SELECT groupArray(detail) FROM (SELECT detail FROM spans FINAL WHERE ${live} ORDER BY start_time, span_id)) AS spans
            FROM traces FINAL WHERE ${live} ${keyReadSettings}`,
    query_params: { workspaceId, traceId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ item: string; spans: string[] }>();
  return row;
}

/** The details of every live span of the given traces, in start order. */
export async function selectSpans(clickhouse: ClickHouseClient, workspaceId: string, traceIds: string[]) {
  if (traceIds.length === 0) return [];
  const result = await clickhouse.query({
    query: `SELECT trace_id, detail FROM spans FINAL
            WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)} AND is_deleted = 0
            ORDER BY trace_id, start_time, span_id ${keyReadSettings}`,
    query_params: { workspaceId, traceIds },
    format: 'JSONEachRow',
  });
  return result.json<{ trace_id: string; detail: string }>();
}

/**
 * Tombstones (is_deleted = 1, a newer version) for the trace's spans and summary. They carry
 * the keys and start time only, so once merged the trace's content is gone from disk too;
 * the start time keeps the retention TTL of the tombstone in step with the rows it hides.
 * The summary's tombstone also carries its session, the key of its copy in `session_traces`
 * (clickhouse/0009), so it hides that copy too.
 */
export async function tombstoneTrace(clickhouse: ClickHouseClient, workspaceId: string, traceId: string) {
  const query_params = { workspaceId, traceId, version: nextVersion().toString() };
  const live = 'WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0';
  await clickhouse.command({
    query: `INSERT INTO spans (workspace_id, trace_id, span_id, start_time, version, is_deleted)
            SELECT workspace_id, trace_id, span_id, start_time, {version:UInt64}, 1 FROM spans FINAL ${live}`,
    query_params,
  });
  await clickhouse.command({
    query: `INSERT INTO traces (workspace_id, trace_id, session_id, start_time, span_count, error_count, version, is_deleted)
            SELECT workspace_id, trace_id, session_id, start_time, 0, 0, {version:UInt64}, 1 FROM traces FINAL ${live}`,
    query_params,
  });
}
