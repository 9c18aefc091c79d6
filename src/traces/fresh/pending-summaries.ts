import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { inApplyOrder } from '../writer/flush.js';
import { type PendingRow, selectSummarySpans } from '../tables/spans-table.js';
import {
  earliestStart,
  keepLatest as keep,
  summarizeTraces,
  summarizeTracesInTurns,
  type PreviousSummary,
  type SpanFacts,
  type TraceSummaryRow,
} from '../summaries/summary.js';
import { selectPreviousSummaries } from '../tables/traces-table.js';
import { inTurns } from '../../http/server/turns.js';
import type { UnappliedWrites } from '../writer/write-batcher.js';

/** The traces of unapplied writes and their summaries (`pendingSummaries`). */
export interface PendingSummaries {
  /** Every trace the writes touch: the store's rows of these are replaced by `rows`. */
  traceIds: string[];
  /** Their summaries as the flushes will write them (a trace whose spans are all deleted has none). */
  rows: TraceSummaryRow[];
}

type StoredFacts = SpanFacts & { is_deleted: number };

/**
 * The summaries that answered writes not yet applied will give their traces, computed for a
 * read instead of waiting for the writer's flushes (docs/decisions/081-reads-over-unapplied-writes.md).
 *
 * The flushes to come, replayed in memory with the same rules (recompute.ts, summary.ts) over
 * the same rows: each span's latest stored row (key reads of the traces touched, on the reads'
 * client), replaced by a newer version as the engine keeps it; first the rows of the statement
 * under way, at the versions it applies them, summarized over the stored summaries; then the
 * other writes, in the order they will be applied, at the versions that order gives them
 * (`inApplyOrder`), summarized over the first step's summaries. A write applied while the read
 * runs is read twice, stored and pending, and counts once: the same span at the same version
 * or replaced by itself.
 */
export async function pendingSummaries(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  unapplied: UnappliedWrites,
): Promise<PendingSummaries> {
  const traceIds = pendingTraceIds(unapplied);
  if (traceIds.length === 0) return { traceIds, rows: [] };
  // The summaries first (a key read of `traces`, one row a version), then the spans of only the
  // traces the store has a summary row for: a trace that has none has no stored spans but those
  // of a statement under way, which are held here. Traces sent once, the most common, so cost
  // one light statement. A trace whose only summary the statement under way wrote counts as one
  // without (`freshUnderWay`: its rows are all held here).
  const storedSummaries = (await selectPreviousSummaries(clickhouse, { workspaceId, traceIds })).filter(
    (summary) => !unapplied.freshUnderWay?.(summary.trace_id),
  );
  const summarized = new Set(storedSummaries.map((summary) => summary.trace_id));
  // A trace the store does not hold, that one queued write alone carries, is summarized from
  // that write, once for every read while it waits (`summariesOfWrite`); the others are replayed.
  const alone = soleWrites(unapplied);
  const fromWrites: TraceSummaryRow[] = [];
  const replayed = new Set<string>();
  const turn = inTurns();
  for (const id of traceIds) {
    // Hundreds of pending traces take the thread tens of ms: ingest requests go in between.
    await turn();
    const summary = summarized.has(id) ? undefined : summariesOfWrite(workspaceId, alone.get(id))?.get(id);
    if (summary) fromWrites.push(summary);
    else replayed.add(id);
  }
  if (replayed.size === 0) return { traceIds, rows: fromWrites };
  const storedSpans = summarized.size > 0 ? await selectSummarySpans(clickhouse, { workspaceId, traceIds: [...summarized] }) : [];
  const previous = storedSummaries.filter((summary) => summary.is_deleted === 0);
  return { traceIds, rows: [...fromWrites, ...(await replay(workspaceId, unapplied, replayed, storedSpans, previous))] };
}

/** Every trace the unapplied writes touch, once. */
export function pendingTraceIds({ applying, queued }: UnappliedWrites): string[] {
  return [...new Set([...applying, ...queued.flat()].map((row) => row.trace_id))];
}

/** The pending traces as the newest-first list needs them (`pendingTraces`). */
export interface PendingTraces {
  /**
   * The start time of each one that will have a summary (a trace whose spans are all deleted has
   * none), as the flushes will store it ('YYYY-MM-DD hh:mm:ss.ffffff'): the list's sort key.
   */
  starts: Map<string, string>;
  /** The summaries the flushes will write for these traces (a list asks for its page's only). */
  summaries: (traceIds: string[]) => Promise<TraceSummaryRow[]>;
}

/** What a start time needs of a span row, stored or pending (a pending row is live). */
type Timed = { trace_id: string; span_id: string; version: string; start_time: string; is_deleted?: number };

/**
 * The pending traces' start times at once and their summaries when asked, given which of them
 * the store holds a summary row of (`held`): only those cost key reads, of their previous
 * summaries and spans, but those the statement under way found the store holding nothing of.
 * A start time is the summary's own (`earliestStart`) over the live rows the flushes will keep,
 * each span's latest (`keep`: the stored ones, the statement under way's, then the other
 * writes' at the versions `inApplyOrder` gives them); a trace the store holds nothing of has no
 * stored spans but those of the statement under way, which are held here. The summaries are the
 * replay `pendingSummaries` makes (`replay`).
 */
export async function pendingTraces(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  unapplied: UnappliedWrites,
  held: string[],
): Promise<PendingTraces> {
  // A trace whose only stored rows the statement under way wrote is replayed from its rows, held here.
  const stored = held.filter((id) => !unapplied.freshUnderWay?.(id));
  // Two reads at once, as the flush's recompute reads them (the embedded engine runs them in turn).
  const [storedSummaries, storedSpans] =
    stored.length > 0
      ? await Promise.all([
          selectPreviousSummaries(clickhouse, { workspaceId, traceIds: stored }),
          selectSummarySpans(clickhouse, { workspaceId, traceIds: stored }),
        ])
      : [[], []];
  const spans = new Map<string, Timed>();
  for (const span of storedSpans) keep(spans, span);
  for (const row of unapplied.applying) keep(spans, row);
  for (const row of inApplyOrder(unapplied.queued, unapplied.floor).rows) keep(spans, row);
  const live = new Map<string, Timed[]>();
  for (const span of spans.values()) {
    if (span.is_deleted) continue;
    const group = live.get(span.trace_id);
    if (group) group.push(span);
    else live.set(span.trace_id, [span]);
  }
  const starts = new Map([...live].map(([traceId, group]) => [traceId, earliestStart(group)]));
  const previous = storedSummaries.filter((summary) => summary.is_deleted === 0);
  return {
    starts,
    summaries: (traceIds) => {
      const ids = new Set(traceIds);
      const own = <T extends { trace_id: string }>(rows: T[]) => rows.filter((row) => ids.has(row.trace_id));
      return replay(workspaceId, unapplied, ids, own(storedSpans), own(previous));
    },
  };
}

/**
 * The flushes to come, replayed for the `replayed` traces over their stored spans and previous
 * summaries: first the rows of the statement under way, at the versions it applies them,
 * summarized over the stored summaries; then the other writes, in the order they will be
 * applied, at the versions that order gives them (`inApplyOrder`), summarized over the first
 * step's summaries.
 */
async function replay(
  workspaceId: string,
  { applying, queued, floor }: UnappliedWrites,
  replayed: Set<string>,
  storedSpans: StoredFacts[],
  storedPrevious: PreviousSummary[],
): Promise<TraceSummaryRow[]> {
  if (replayed.size === 0) return [];
  const spans = new Map<string, StoredFacts>();
  const live = (ids: Set<string>) => [...spans.values()].filter((span) => span.is_deleted === 0 && ids.has(span.trace_id));
  for (const span of storedSpans) keep(spans, span);
  let previous = storedPrevious;

  // The statement under way, as it will summarize its traces.
  let newest = floor;
  // (Of the replayed traces only: the others' summaries would only raise the versions the later
  // writes are replayed at, which keeps their order, and so every field but `version`.)
  const underWay = applying.filter((row) => replayed.has(row.trace_id));
  if (underWay.length > 0) {
    for (const row of underWay) keep(spans, factsOf(row));
    const first = await summarizeTracesInTurns(
      workspaceId,
      live(new Set(underWay.map((r) => r.trace_id))),
      previous,
      floor.toString(),
      underWay,
    );
    const replaced = new Set(first.map((row) => row.trace_id));
    previous = [...previous.filter((p) => !replaced.has(p.trace_id)), ...first.map(previousOf)];
    for (const row of first) if (BigInt(row.version) > newest) newest = BigInt(row.version);
  }
  // The writes after it, in order, at the versions they will be raised to (over every write,
  // so that each gets the version its flush will give it).
  const raised = inApplyOrder(queued, newest);
  const written = raised.rows.filter((row) => replayed.has(row.trace_id));
  for (const row of written) keep(spans, factsOf(row));
  return summarizeTracesInTurns(workspaceId, live(replayed), previous, raised.floor.toString(), written);
}

/** For each trace the queued writes touch, the one write carrying it; none when several do or the statement under way does. */
function soleWrites({ applying, queued }: UnappliedWrites): Map<string, readonly PendingRow[] | undefined> {
  const sole = new Map<string, readonly PendingRow[] | undefined>();
  for (const rows of queued) {
    for (const row of rows) {
      const held = sole.get(row.trace_id);
      if (!sole.has(row.trace_id)) sole.set(row.trace_id, rows);
      else if (held !== rows) sole.set(row.trace_id, undefined);
    }
  }
  for (const row of applying) sole.set(row.trace_id, undefined);
  return sole;
}

/** Summaries computed from one write's rows alone, by the rows' identity (a queued write's, kept until it is applied). */
const writeSummaries = new WeakMap<readonly PendingRow[], Map<string, TraceSummaryRow>>();

/**
 * The summaries of the traces of one write, for traces the store does not hold and no other
 * unapplied write touches: the replay would summarize them from these rows alone, with no
 * previous summary. A request gives each trace's rows one version, which its flush may raise;
 * a summary then differs only in its `version`, which no read of the overlay uses (overlayOf),
 * so it is computed once per write instead of at every read. A trace whose rows carry several
 * versions (the same trace twice in one request) gets none here: it is replayed.
 */
function summariesOfWrite(workspaceId: string, rows: readonly PendingRow[] | undefined): Map<string, TraceSummaryRow> | undefined {
  if (!rows) return undefined;
  let summaries = writeSummaries.get(rows);
  if (!summaries) {
    const versions = new Map<string, string | null>();
    for (const row of rows) {
      const held = versions.get(row.trace_id);
      versions.set(row.trace_id, held === undefined || held === row.version ? row.version : null);
    }
    const spans = new Map<string, StoredFacts>();
    const written = rows.filter((row) => versions.get(row.trace_id) !== null);
    for (const row of written) keep(spans, factsOf(row));
    summaries = new Map(summarizeTraces(workspaceId, [...spans.values()], [], '0', written).map((row) => [row.trace_id, row]));
    writeSummaries.set(rows, summaries);
  }
  return summaries;
}

function previousOf(row: TraceSummaryRow): PreviousSummary {
  const { trace_id, version, name, session_id, environment, service, user_id, tags } = row;
  return { trace_id, version, name, session_id, environment, service, user_id, tags };
}

/** A pending row as the key read's rows are kept: live (the pending row holds every column the summary reads). */
const factsOf = (row: PendingRow): StoredFacts => ({ ...row, is_deleted: 0 });
