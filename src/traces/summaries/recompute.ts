import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { nextVersion } from '../model/version.js';
import { tombstoneLeftSessions } from '../tables/session-traces-table.js';
import { selectSummarySpans } from '../tables/spans-table.js';
import { keepLatest, summarizeTracesInTurns, type SpanFacts } from './summary.js';
import { insertTraceSummaries, selectPreviousSummaries } from '../tables/traces-table.js';

/**
 * Recomputes the summary rows of the given traces from their deduplicated live spans: key reads
 * of the previous summaries (traces-table.ts) and of the narrow span columns (spans-table.ts), the
 * rules applied in summary.ts, one plain insert (copied to `session_traces` by its materialized
 * view), and the tombstones of the sessions traces left, if any. A summary's version is `floor`,
 * or just above the summary it replaces; the writer passes the newest span version it applied
 * (write-batcher.ts), other callers a new version. Returns the newest summary version written,
 * which spans applied later must exceed.
 *
 * The writer's flush stores a trace's spans and then its summary, so a trace the store holds no
 * summary row of has no stored spans but the ones the flush just wrote, which it passes as
 * `written`: for those traces (`writtenAlone`) the spans are taken from `written` rather than
 * read back (docs/decisions/087-first-summaries-from-the-written-rows.md). A trace sent once,
 * the most common, then costs the flush no span read; a trace the store holds a summary of, or
 * that the caller cannot vouch for (a write replayed from the log or tried again after a failed
 * flush), is read as before.
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
  /** Whether a trace without a summary row has no stored spans but its `written` rows (none by default: every trace is read). */
  writtenAlone: (traceId: string) => boolean = () => false,
): Promise<bigint> {
  if (traceIds.length === 0) return floor;
  // The summaries first: which traces the store holds decides which spans are read.
  const latestSummaries = await selectPreviousSummaries(clickhouse, { workspaceId, traceIds });
  const held = new Set(latestSummaries.map((summary) => summary.trace_id));
  const unheld = traceIds.filter((id) => !held.has(id));
  fresh?.(unheld);
  const fromWritten = new Set(unheld.filter(writtenAlone));
  const read = fromWritten.size === 0 ? traceIds : traceIds.filter((id) => !fromWritten.has(id));
  const latestSpans = read.length > 0 ? await selectSummarySpans(clickhouse, { workspaceId, traceIds: read }) : [];
  const spans: SpanFacts[] = latestSpans.filter((span) => span.is_deleted === 0);
  if (fromWritten.size > 0) {
    // The rows written are live: each span's latest, as the engine keeps it.
    const latest = new Map<string, SpanFacts>();
    for (const row of written) if (fromWritten.has(row.trace_id)) keepLatest(latest, row);
    for (const span of latest.values()) spans.push(span);
  }
  const previous = latestSummaries.filter((summary) => summary.is_deleted === 0);
  const rows = await summarizeTracesInTurns(workspaceId, spans, previous, floor.toString(), written);
  if (rows.length === 0) return floor;
  await insertTraceSummaries(clickhouse, rows);
  await tombstoneLeftSessions(clickhouse, previous, rows);
  return rows.reduce((max, row) => (BigInt(row.version) > max ? BigInt(row.version) : max), floor);
}
