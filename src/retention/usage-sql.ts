import { z } from 'zod';
import type { ClickHouseClient } from '../stores/clickhouse.js';
import { retainedTables, type RetentionTarget } from './engine-retention.js';

/** Days of daily counts in GET /api/usage, today included. */
export const usageDays = 30;

const dayRow = z.object({ day: z.string(), traces: z.number(), spans: z.number() });
const storageRow = z.object({ table: z.string(), bytes: z.number(), rows: z.number(), workspace_rows: z.number() });
const oldestRow = z.object({ oldest: z.string().nullable() });

async function rowsOf<T extends z.ZodType>(clickhouse: ClickHouseClient, schema: T, query: string, params: Record<string, unknown>) {
  const result = await clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
  return z.array(schema).parse(await result.json());
}

/** Live traces and spans a day (by start time, UTC) over the last `usageDays` days, days without data left out. */
export async function dailyCounts(clickhouse: ClickHouseClient, workspaceId: string) {
  return rowsOf(
    clickhouse,
    dayRow,
    `SELECT toString(day) AS day, sum(traces) AS traces, sum(spans) AS spans FROM (
       SELECT toDate(start_time) AS day, count() AS traces, 0 AS spans FROM traces_latest
       WHERE workspace_id = {workspaceId:String} AND start_time >= toStartOfDay(now('UTC')) - INTERVAL {back:UInt32} DAY
       GROUP BY day
       UNION ALL
       SELECT toDate(start_time) AS day, 0 AS traces, count() AS spans FROM spans_latest
       WHERE workspace_id = {workspaceId:String} AND start_time >= toStartOfDay(now('UTC')) - INTERVAL {back:UInt32} DAY
       GROUP BY day
     ) GROUP BY day ORDER BY day`,
    { workspaceId, back: usageDays - 1 },
  );
}

/**
 * Bytes on disk of the trace tables, per table from the engine's parts, and the workspace's
 * share of each table's stored rows (every version and tombstone, as the parts count them).
 * The parts are shared by all workspaces, so a workspace's bytes are an estimate: each table's
 * bytes times the workspace's share of its rows. On a cluster the parts are those of the
 * `_local` tables on one replica of every shard (the table function `cluster`), against the
 * rows counted through the Distributed tables.
 */
export async function estimatedStorage(clickhouse: ClickHouseClient, workspaceId: string, target: RetentionTarget = {}) {
  const tables = retainedTables.map((t) => t.table);
  const parts = target.cluster ? `cluster('${target.cluster}', system.parts)` : 'system.parts';
  const suffix = target.cluster ? '_local' : '';
  const perTable = await rowsOf(
    clickhouse,
    storageRow,
    `SELECT table, sum(bytes_on_disk) AS bytes, sum(rows) AS rows, 0 AS workspace_rows FROM ${parts}
     WHERE database = currentDatabase() AND active AND table IN {tables:Array(String)} GROUP BY table`,
    { tables: tables.map((t) => `${t}${suffix}`) },
  );
  let bytesOnDisk = 0;
  let rows = 0;
  for (const table of tables) {
    const part = perTable.find((p) => p.table === `${table}${suffix}`);
    if (!part || part.rows === 0) continue;
    const [own] = await rowsOf(
      clickhouse,
      z.object({ n: z.number() }),
      `SELECT count() AS n FROM ${table} WHERE workspace_id = {workspaceId:String}`,
      { workspaceId },
    );
    const share = (own?.n ?? 0) / part.rows;
    bytesOnDisk += part.bytes * Math.min(1, share);
    rows += own?.n ?? 0;
  }
  return { bytesOnDisk: Math.round(bytesOnDisk), rows, estimated: true as const };
}

/** The start of the oldest live span the workspace keeps, ISO 8601; null with none. */
export async function oldestDataAt(clickhouse: ClickHouseClient, workspaceId: string): Promise<string | null> {
  const [row] = await rowsOf(
    clickhouse,
    oldestRow,
    `SELECT if(count() = 0, NULL, formatDateTime(min(start_time), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')) AS oldest
     FROM spans WHERE workspace_id = {workspaceId:String} AND is_deleted = 0`,
    { workspaceId },
  );
  return row?.oldest ?? null;
}
