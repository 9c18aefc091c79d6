import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { nextVersion } from '../model/version.js';
import { tombstoneLeftSessions } from '../tables/session-traces-table.js';
import { selectSummarySpans } from '../tables/spans-table.js';
import { keepLatest, summarizeTracesInTurns, type SpanFacts } from './summary.js';
import { insertTraceSummaries, selectPreviousSummaries } from '../tables/traces-table.js';

/**
 * The recompute of trace summaries, in two steps a caller runs in order: `heldSummaries` reads
 * the previous summaries (traces-table.ts), which tell the traces the store holds nothing of;
 * `writeSummaries` reads the narrow span columns of the others (spans-table.ts), applies the
 * rules of summary.ts, makes one plain insert (copied to `session_traces` by its materialized
 * view) and the tombstones of the sessions traces left, if any. The writer's flush runs the two
 * itself (writer/flush.ts) and notes between them which traces the store held nothing of;
 * other callers run `recomputeTraceSummaries`, the two in a row.
 *
 * A summary's version is `floor`, or just above the summary it replaces; the writer passes the
 * newest span version it applied, other callers a new version. The newest summary version
 * written is returned: spans applied later must exceed it.
 */
export async function recomputeTraceSummaries(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  traceIds: string[],
  floor: bigint = nextVersion(),
): Promise<bigint> {
  if (traceIds.length === 0) return floor;
  return writeSummaries(clickhouse, await heldSummaries(clickhouse, workspaceId, traceIds), floor);
}

/** The traces of one workspace about to be summarized, with what the store holds of them. */
export interface HeldSummaries {
  workspaceId: string;
  traceIds: string[];
  /** The latest summary row of each trace the store holds one of (deleted ones too). */
  latest: Awaited<ReturnType<typeof selectPreviousSummaries>>;
  /** The traces the store holds no summary row of. */
  unheld: string[];
}

/** The first step: the previous summaries, key reads (the store's summaries decide which spans are read). */
export async function heldSummaries(clickhouse: ClickHouseClient, workspaceId: string, traceIds: string[]): Promise<HeldSummaries> {
  const latest = await selectPreviousSummaries(clickhouse, { workspaceId, traceIds });
  const held = new Set(latest.map((summary) => summary.trace_id));
  return { workspaceId, traceIds, latest, unheld: traceIds.filter((id) => !held.has(id)) };
}

/**
 * The second step: the summaries computed and written. The writer's flush stores a trace's spans
 * and then its summary, so a trace the store holds no summary row of has no stored spans but
 * the ones the flush just wrote (`written`, in the order applied): the traces of `fromWritten`
 * take their spans from those rows rather than a read
 * (docs/decisions/087-first-summaries-from-the-written-rows.md). A trace sent once, the most
 * common, then costs the flush no span read; every other trace is read.
 */
export async function writeSummaries(
  clickhouse: ClickHouseClient,
  { workspaceId, traceIds, latest }: HeldSummaries,
  floor: bigint,
  written: SpanFacts[] = [],
  fromWritten: ReadonlySet<string> = new Set(),
): Promise<bigint> {
  const read = fromWritten.size === 0 ? traceIds : traceIds.filter((id) => !fromWritten.has(id));
  const latestSpans = read.length > 0 ? await selectSummarySpans(clickhouse, { workspaceId, traceIds: read }) : [];
  const spans: SpanFacts[] = latestSpans.filter((span) => span.is_deleted === 0);
  if (fromWritten.size > 0) {
    // The rows written are live: each span's latest, as the engine keeps it.
    const newest = new Map<string, SpanFacts>();
    for (const row of written) if (fromWritten.has(row.trace_id)) keepLatest(newest, row);
    for (const span of newest.values()) spans.push(span);
  }
  const previous = latest.filter((summary) => summary.is_deleted === 0);
  const rows = await summarizeTracesInTurns(workspaceId, spans, previous, floor.toString(), written);
  if (rows.length === 0) return floor;
  await insertTraceSummaries(clickhouse, rows);
  await tombstoneLeftSessions(clickhouse, previous, rows);
  return rows.reduce((max, row) => (BigInt(row.version) > max ? BigInt(row.version) : max), floor);
}
