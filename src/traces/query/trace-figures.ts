import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { TraceFigures, TraceFiguresReader } from '../../contract/trace-figures.js';
import { selectFiguresOfTraces } from '../tables/traces-table.js';

/** The reader of traces' cost, latency and failure the app hands to the datasets feature (contract/trace-figures.ts). */
export function traceFiguresReader(clickhouse: ClickHouseClient): TraceFiguresReader {
  return async (workspaceId, traceIds) => {
    const out = new Map<string, TraceFigures>();
    if (traceIds.length === 0) return out;
    for (const row of await selectFiguresOfTraces(clickhouse, { workspaceId, traceIds }))
      out.set(row.trace_id, { costUsd: row.cost_usd, latencyMs: row.duration_ms, error: row.failed === 1 });
    return out;
  };
}
