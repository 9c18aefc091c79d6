import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import type { RunScores, TraceScoreValue } from '../../contract/run-scores.js';
import { selectScoreConfigsByName } from '../tables/configs-table.js';
import { selectScoreValuesOfTraces } from '../tables/scores-table.js';

/** The scores of run items' traces (contract/run-scores.ts), handed to the dataset run routes by the app. */
export function runScoresOf(clickhouse: ClickHouseClient, sql: Sql): RunScores {
  return {
    async valuesOfTraces(workspaceId, traceIds) {
      const out = new Map<string, Record<string, TraceScoreValue>>();
      if (traceIds.length === 0) return out;
      for (const row of await selectScoreValuesOfTraces(clickhouse, { workspaceId, traceIds })) {
        const values = out.get(row.trace_id) ?? {};
        values[row.name] = { dataType: row.data_type, n: row.n, mean: row.mean };
        out.set(row.trace_id, values);
      }
      return out;
    },
    async higherIsBetter(workspaceId, names) {
      const configs = await selectScoreConfigsByName(sql, workspaceId, names);
      return new Map([...configs].map(([name, config]) => [name, config.higherIsBetter]));
    },
  };
}
