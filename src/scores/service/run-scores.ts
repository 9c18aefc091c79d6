import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import type { RunScores, TraceScoreValue } from '../../contract/run-scores.js';
import { selectScoreConfigsByName } from '../tables/configs-table.js';
import { selectScoreValuesOfTraces } from '../tables/score-targets-table.js';

/** The label most of `labels` are (a tie: the first in code unit order); null without labels. */
function mostFrequent(labels: string[]): string | null {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  let best: [string, number] | null = null;
  for (const entry of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) if (!best || entry[1] > best[1]) best = entry;
  return best?.[0] ?? null;
}

/** The scores of run items' traces (contract/run-scores.ts), handed to the dataset run routes by the app. */
export function runScoresOf(clickhouse: ClickHouseClient, sql: Sql): RunScores {
  return {
    async valuesOfTraces(workspaceId, traceIds) {
      const out = new Map<string, Record<string, TraceScoreValue>>();
      if (traceIds.length === 0) return out;
      for (const row of await selectScoreValuesOfTraces(clickhouse, { workspaceId, traceIds })) {
        const values = out.get(row.trace_id) ?? {};
        values[row.name] = {
          dataType: row.data_type,
          n: row.n,
          mean: row.mean,
          category: row.data_type === 'categorical' ? mostFrequent(row.labels) : null,
        };
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
