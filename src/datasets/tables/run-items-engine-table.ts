import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { MirroredRunItemRow } from './runs-table.js';

/**
 * The SQL on the engine's copy of the run items, `dataset_run_items` (clickhouse/0017), read by
 * POST /api/sql through the view `sql_dataset_run_items` (clickhouse/0018). Rows only ever
 * come in: a newer version replaces a row, a tombstone (`is_deleted = 1`) hides it.
 */

interface EngineRow {
  workspace_id: string;
  dataset_id: string;
  run_id: string;
  run_name: string;
  dataset_item_id: string;
  trace_id: string;
  span_id: string;
  output: string;
  error: string;
  created_at: string;
  updated_at: string;
  version: string;
  is_deleted: 0 | 1;
}

/** A time as the engine's DateTime64(6, 'UTC') text reads it. */
const engineTime = (time: Date) => time.toISOString().replace('T', ' ').replace('Z', '');

export function liveRow(workspaceId: string, row: MirroredRunItemRow): EngineRow {
  return {
    workspace_id: workspaceId,
    dataset_id: row.datasetId,
    run_id: row.runId,
    run_name: row.runName,
    dataset_item_id: row.datasetItemId,
    trace_id: row.traceId,
    span_id: row.spanId ?? '',
    output: row.output ?? '',
    error: row.error ?? '',
    created_at: engineTime(row.createdAt),
    updated_at: engineTime(row.updatedAt),
    version: row.version,
    is_deleted: 0,
  };
}

/** The tombstone of a run item: its key and version, the rest empty. */
export function tombstoneRow(workspaceId: string, runId: string, datasetItemId: string, version: string, at: Date): EngineRow {
  return {
    workspace_id: workspaceId,
    dataset_id: '',
    run_id: runId,
    run_name: '',
    dataset_item_id: datasetItemId,
    trace_id: '',
    span_id: '',
    output: '',
    error: '',
    created_at: engineTime(at),
    updated_at: engineTime(at),
    version,
    is_deleted: 1,
  };
}

/** Inserts and waits for the write, so what the API answered is readable through SQL at once. */
export async function insertRunItemRows(clickhouse: ClickHouseClient, rows: EngineRow[]): Promise<void> {
  if (rows.length === 0) return;
  await clickhouse.insert({ table: 'dataset_run_items', values: rows, format: 'JSONEachRow' });
}
