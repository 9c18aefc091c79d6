import type { ClickHouseClient } from '../stores/clickhouse.js';
import { nextVersion } from './rows.js';
import { tombstoneLeftSessions } from './session-traces-table.js';
import { selectSummarySpans } from './spans-table.js';
import { summarizeTracesInTurns, type SpanFacts } from './summary.js';
import { insertTraceSummaries, selectPreviousSummaries } from './traces-table.js';

/**
 * Recomputes the summary rows of the given traces from their deduplicated live spans: key reads
 * of the narrow span columns (spans-table.ts) and of the previous summaries (traces-table.ts), the rules
 * applied in summary.ts, one plain insert (copied to `session_traces` by its materialized view),
 * and the tombstones of the sessions traces left, if any. A summary's version is `floor`, or just
 * above the summary it replaces; the writer passes the newest span version it applied
 * (write-batcher.ts), other callers a new version. Returns the newest summary version written,
 * which spans applied later must exceed.
 */
export async function recomputeTraceSummaries(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  traceIds: string[],
  floor: bigint = nextVersion(),
  /** The rows the writer's flush wrote for these traces, in the order applied (summary.ts, `written`). */
  written: SpanFacts[] = [],
  /** Hears, before any summary is written, the traces the store held no summary row of (of any version). */
  fresh?: (traceIds: string[]) => void,
): Promise<bigint> {
  if (traceIds.length === 0) return floor;
  // Two reads at once (on a server; the embedded engine runs them in turn on the session).
  const [latestSpans, latestSummaries] = await Promise.all([
    selectSummarySpans(clickhouse, { workspaceId, traceIds }),
    selectPreviousSummaries(clickhouse, { workspaceId, traceIds }),
  ]);
  if (fresh) {
    const held = new Set(latestSummaries.map((summary) => summary.trace_id));
    fresh(traceIds.filter((id) => !held.has(id)));
  }
  const spans = latestSpans.filter((span) => span.is_deleted === 0);
  const previous = latestSummaries.filter((summary) => summary.is_deleted === 0);
  const rows = await summarizeTracesInTurns(workspaceId, spans, previous, floor.toString(), written);
  if (rows.length === 0) return floor;
  await insertTraceSummaries(clickhouse, rows);
  await tombstoneLeftSessions(clickhouse, previous, rows);
  return rows.reduce((max, row) => (BigInt(row.version) > max ? BigInt(row.version) : max), floor);
}
