import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { defineQuery } from '../../stores/clickhouse-query.js';
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

/**
 * Per subject run, per metric (each score name, the traces' cost and latency): the sufficient
 * statistics of its pairs with the baseline run, over the items both runs have with a value in
 * both, as the paired tests take them (docs/decisions/106-run-items-for-sql.md). An
 * item's score of a name is the mean of its trace's live scores of it (boolean: true when ≥ ½),
 * its category the one most of them have (a tie: the first in byte order); cost and latency are
 * its trace's live summary's. A metric some run has without any pair comes with `n` 0 (and
 * `run_id` '' when only the baseline has it), so every score name of the runs is answered with
 * its data type. Reads the workspace's live rows through the views of POST /api/sql, which
 * bind the workspace: `sql_dataset_run_items`, `sql_scores`, `sql_traces`. Every run's values
 * are read once, grouped per item and metric, and each subject's paired with the baseline's.
 */
export const selectRunPairSums = defineQuery({
  name: 'selectRunPairSums',
  params: z.object({ workspaceId: z.string(), baselineRunId: z.string(), runIds: z.array(z.string()).min(2) }),
  row: z.object({
    run_id: z.string(),
    kind: z.enum(['score', 'cost', 'latency']),
    name: z.string(),
    type: z.enum(['numeric', 'categorical', 'boolean']),
    n: z.coerce.number(),
    baseline_mean: z.number(),
    mean: z.number(),
    difference_mean: z.number(),
    difference_variance: z.number(),
    baseline_true: z.coerce.number(),
    subject_true: z.coerce.number(),
    baseline_only: z.coerce.number(),
    subject_only: z.coerce.number(),
    transitions: z.array(z.tuple([z.string(), z.string(), z.coerce.number()])),
  }),
  sql: (values) => ({
    values,
    query: `WITH
      items AS (
        SELECT run_id, dataset_item_id, trace_id
        FROM sql_dataset_run_items(workspace = {workspaceId:String})
        WHERE run_id IN {runIds:Array(String)}
      ),
      item_scores AS (
        SELECT trace_id, name, type, mean,
          if(type = 'categorical', arraySort(x -> (-x.2, x.1), arrayMap(l -> (l, countEqual(labels, l)), arrayDistinct(labels)))[1].1, '')
            AS category
        FROM (
          SELECT trace_id, name, any(data_type) AS type, avg(value) AS mean, groupArray(string_value) AS labels
          FROM sql_scores(workspace = {workspaceId:String})
          WHERE trace_id IN (SELECT trace_id FROM items)
          GROUP BY trace_id, name
        )
      ),
      figures AS (
        SELECT trace_id, cost_usd, duration_ms
        FROM sql_traces(workspace = {workspaceId:String})
        WHERE trace_id IN (SELECT trace_id FROM items)
      ),
      item_values AS (
        SELECT i.run_id AS run_id, i.dataset_item_id AS item_id, 'score' AS kind, s.name AS name, s.type AS type, s.mean AS value,
          s.category AS category
        FROM items AS i INNER JOIN item_scores AS s ON s.trace_id = i.trace_id
        UNION ALL
        SELECT i.run_id, i.dataset_item_id, m.1, m.2, 'numeric', assumeNotNull(m.3), ''
        FROM items AS i INNER JOIN figures AS f ON f.trace_id = i.trace_id
        ARRAY JOIN [('cost', 'costUsd', f.cost_usd), ('latency', 'latencyMs', f.duration_ms)] AS m
        WHERE m.3 IS NOT NULL
      ),
      per_item AS (
        SELECT kind, name, any(type) AS type,
          countIf(run_id = {baselineRunId:String}) > 0 AS has_baseline,
          anyIf(value, run_id = {baselineRunId:String}) AS b_value, anyIf(category, run_id = {baselineRunId:String}) AS b_category,
          groupArrayIf((run_id, value, category), run_id != {baselineRunId:String}) AS subjects
        FROM item_values
        GROUP BY item_id, kind, name
      )
      SELECT run_id, kind, name, type, n, baseline_mean, mean, difference_mean, difference_variance,
        baseline_true, subject_true, baseline_only, subject_only,
        arrayMap(t -> (t.1, t.2, countEqual(categories, t)), arrayDistinct(categories)) AS transitions
      FROM (
        SELECT run_id, kind, name, any(type) AS type, countIf(paired) AS n,
          if(n > 0, avgIf(b_value, paired), 0) AS baseline_mean, if(n > 0, avgIf(value, paired), 0) AS mean,
          if(n > 0, avgIf(value - b_value, paired), 0) AS difference_mean,
          if(n > 1, varSampStableIf(value - b_value, paired), 0) AS difference_variance,
          countIf(paired AND b_value >= 0.5) AS baseline_true, countIf(paired AND value >= 0.5) AS subject_true,
          countIf(paired AND b_value >= 0.5 AND value < 0.5) AS baseline_only, countIf(paired AND b_value < 0.5 AND value >= 0.5) AS subject_only,
          groupArrayIf((b_category, category), paired AND b_category != '' AND category != '') AS categories
        FROM (
          SELECT s.1 AS run_id, kind, name, type, has_baseline AND s.1 != '' AS paired, b_value, b_category, s.2 AS value, s.3 AS category
          FROM per_item LEFT ARRAY JOIN subjects AS s
        )
        GROUP BY run_id, kind, name
      )
      ORDER BY run_id, kind, name`,
  }),
});

export type RunPairSums = Awaited<ReturnType<typeof selectRunPairSums>>[number];
