import type { ClickHouseClient } from '../stores/clickhouse.js';
import { nextVersion } from './rows.js';
import { tombstoneLeftSessions } from './session-traces-table.js';
import { selectSummaryInputs } from './spans-table.js';
import { summarizeTraces } from './summary.js';
import { insertTraceSummaries } from './traces-table.js';

/**
 * Recomputes the summary rows of the given traces from their deduplicated live spans: one key
 * read of the narrow span columns and of the previous summaries (spans-table.ts), the rules
 * applied in summary.ts, one plain insert (copied to `session_traces` by its materialized view),
 * and the tombstones of the sessions traces left, if any.
 */
export async function recomputeTraceSummaries(clickhouse: ClickHouseClient, workspaceId: string, traceIds: string[]) {
  if (traceIds.length === 0) return;
  const [inputs] = await selectSummaryInputs(clickhouse, { workspaceId, traceIds });
  const previous = inputs?.previous ?? [];
  const rows = summarizeTraces(workspaceId, inputs?.spans ?? [], previous, nextVersion().toString());
  if (rows.length === 0) return;
  await insertTraceSummaries(clickhouse, rows);
  await tombstoneLeftSessions(clickhouse, previous, rows);
}
