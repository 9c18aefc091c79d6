import type { ClickHouseClient } from '../stores/clickhouse.js';
import { isLlm, usageColumns } from './span-groups.js';

/**
 * Keeps `trace_rollups` (clickhouse/0003) in step with the trace summaries.
 *
 * A rollup mirrors one version of a trace's summary row. Before every span-level aggregate, a
 * cheap check compares the live (trace_id, version) pairs of both tables; when they differ,
 * one statement finds the live summaries whose (trace_id, version) has no rollup yet (new,
 * re-sent or re-ingested traces) and recomputes their rollups inside the engine from their
 * deduplicated spans, a read bounded by the primary key. Deleted traces are tombstoned by a
 * materialized view as their summary is. So the aggregates are exact after every ingest
 * without any change to the ingest path, and the work is proportional to what changed. The
 * ingest path may call `syncTraceRollups` itself to move that work to write time.
 *
 * Rules (as for the summaries, DESIGN.md): usage counts for generation spans (`llm.*`), and
 * for other kinds only in a trace with no generation span; the trace's start is the earliest
 * start of its live spans; its session the newest non-empty one.
 */

const group = (dimension: string) =>
  `arraySort(g -> g.key, groupArrayIf(CAST((key, spans, errors, input_tokens, output_tokens, total_tokens, cost_usd, durations),
     'Tuple(key LowCardinality(String), spans UInt32, errors UInt32, input_tokens Float64, output_tokens Float64, total_tokens Float64, cost_usd Float64, durations Array(Float64))'),
     dimension = '${dimension}'))`;

const counted = usageColumns.map((c) => `if(trace_llm_spans > 0, llm_${c}, any_${c}) AS ${c}`).join(', ');
const sums = usageColumns.map((c) => `sumIf(ifNull(${c}, 0), ${isLlm}) AS llm_${c}, sum(ifNull(${c}, 0)) AS any_${c}`).join(',\n          ');

/** Live summaries without a current rollup: the traces to (re)compute. */
const stale = `
  SELECT trace_id, version FROM traces FINAL
  WHERE workspace_id = {workspaceId:String} AND is_deleted = 0
    AND (trace_id, version) NOT IN (SELECT trace_id, version FROM trace_rollups WHERE workspace_id = {workspaceId:String})`;

export const rollupSyncQuery = `
  INSERT INTO trace_rollups (workspace_id, trace_id, start_time, session_id, by_model, by_provider, by_kind, version, is_deleted)
  SELECT {workspaceId:String}, r.trace_id, r.start_time, r.session_id, r.by_model, r.by_provider, r.by_kind, s.version, 0
  FROM (
    SELECT trace_id, any(trace_start) AS start_time, any(trace_session) AS session_id,
      ${group('model')} AS by_model, ${group('provider')} AS by_provider, ${group('kind')} AS by_kind
    FROM (
      SELECT trace_id, dimension, key, spans, errors, durations, trace_start, trace_session, ${counted}
      FROM (
        SELECT trace_id,
          multiIf(grouping(model) = 0, 'model', grouping(provider) = 0, 'provider', 'kind') AS dimension,
          multiIf(grouping(model) = 0, model, grouping(provider) = 0, provider, kind) AS key,
          count() AS spans,
          countIf(status = 'error') AS errors,
          ${sums},
          groupArray(duration_ms) AS durations,
          min(min(start_time)) OVER per_trace AS trace_start,
          max(countIf(${isLlm})) OVER per_trace AS trace_llm_spans,
          argMax(argMaxIf(session_id, version, session_id != ''), maxIf(version, session_id != '')) OVER per_trace AS trace_session
        FROM spans FINAL
        WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 AND trace_id IN (SELECT trace_id FROM (${stale}))
        GROUP BY GROUPING SETS ((trace_id, model), (trace_id, provider), (trace_id, kind))
        WINDOW per_trace AS (PARTITION BY trace_id)
      )
    )
    GROUP BY trace_id
  ) AS r
  INNER JOIN (${stale}) AS s ON s.trace_id = r.trace_id`;

/**
 * The set of live (trace_id, version) pairs of a table, as a count and a sum of 64-bit hashes:
 * equal fingerprints on both tables mean the rollups are current (a false match needs a 64-bit
 * hash collision), and comparing them reads two narrow one-row-per-trace scans instead of
 * matching a million pairs.
 */
const fingerprint = (table: string) =>
  `(SELECT (count(), sum(cityHash64(trace_id, version))) FROM ${table} FINAL WHERE workspace_id = {workspaceId:String} AND is_deleted = 0)`;

/** Brings the workspace's rollups up to date with its trace summaries; one cheap check when they are. */
export async function syncTraceRollups(clickhouse: ClickHouseClient, workspaceId: string): Promise<void> {
  const check = await clickhouse.query({
    query: `SELECT ${fingerprint('traces')} = ${fingerprint('trace_rollups')} AS current`,
    query_params: { workspaceId },
    format: 'JSONEachRow',
  });
  const [row] = await check.json<{ current: number | boolean }>();
  if (Number(row?.current) === 1) return;
  await clickhouse.command({
    query: rollupSyncQuery,
    query_params: { workspaceId },
    // On a cluster both tables are sharded by trace id, so subqueries may read the shard-local
    // tables; inserts wait for the rows to reach their shard, as the summaries' do.
    clickhouse_settings: { insert_distributed_sync: 1, distributed_product_mode: 'local' },
  });
}
