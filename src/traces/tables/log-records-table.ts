import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { spanKeyParams } from './params.js';

/**
 * The SQL of `genai_log_records` (clickhouse/0005, 0010): GenAI content sent on the OTLP logs
 * signal, kept until its span arrives (ingest/otlp/logs/log-records.ts).
 */

/** A row of the table. */
export interface LogRecordRow {
  workspace_id: string;
  trace_id: string;
  span_id: string;
  time: string;
  seq: number;
  event_name: string;
  body: string;
  record_id: string;
  version: string;
}

/** A span a record belongs to. */
export interface SpanKey {
  traceId: string;
  spanId: string;
}

/**
 * Records of the given spans, deduplicated (the newest row of each record, skipped when it is
 * a tombstone of a deleted trace), in time order (then request order).
 */
export async function selectLogRecords(clickhouse: ClickHouseClient, workspaceId: string, keys: SpanKey[]) {
  const result = await clickhouse.query({
    query: `
      SELECT trace_id, span_id, event_name, body
      FROM (
        SELECT trace_id, span_id, time, seq, event_name, body, is_deleted
        FROM genai_log_records
        WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)} AND span_id IN {spanIds:Array(String)} AND concat(trace_id, '/', span_id) IN {keys:Array(String)}
        ORDER BY trace_id, span_id, time, record_id, version DESC
        LIMIT 1 BY trace_id, span_id, time, record_id
      )
      WHERE is_deleted = 0
      ORDER BY trace_id, span_id, time, seq`,
    query_params: { workspaceId, ...spanKeyParams(keys) },
    format: 'JSONEachRow',
  });
  return result.json<{ trace_id: string; span_id: string; event_name: string; body: string }>();
}

export async function insertLogRecords(clickhouse: ClickHouseClient, rows: LogRecordRow[]) {
  await clickhouse.insert({ table: 'genai_log_records', values: rows, format: 'JSONEachRow' });
}

/**
 * Tombstones for a deleted trace's records (DELETE /api/traces/:id): the newest row of each
 * record again, a newer version with `is_deleted = 1` and an empty body (clickhouse/0010), so
 * once merged the content is gone from disk and a span sent again does not take it back.
 */
export async function tombstoneLogRecords(clickhouse: ClickHouseClient, workspaceId: string, traceId: string, version: string) {
  await clickhouse.command({
    query: `
      INSERT INTO genai_log_records (workspace_id, trace_id, span_id, time, seq, event_name, body, record_id, version, is_deleted)
      SELECT workspace_id, trace_id, span_id, time, seq, event_name, '', record_id, {version:UInt64}, 1
      FROM genai_log_records FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0`,
    query_params: { workspaceId, traceId, version },
  });
}
