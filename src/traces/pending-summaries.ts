import type { ClickHouseClient } from '../stores/clickhouse.js';
import { inApplyOrder, type SpanRow } from './rows.js';
import { selectSummarySpans } from './spans-table.js';
import {
  compareVersion,
  summarizeTraces,
  summarizeTracesInTurns,
  type PreviousSummary,
  type SpanFacts,
  type TraceSummaryRow,
} from './summary.js';
import { selectPreviousSummaries } from './traces-table.js';
import { overlayOf, type TraceOverlay } from './traces-table-pages.js';
import { inTurns } from '../http/turns.js';
import type { UnappliedWrites, WriteBatcher } from './write-batcher.js';

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
  { applying, queued, floor }: UnappliedWrites,
): Promise<PendingSummaries> {
  const traceIds = [...new Set([...applying, ...queued.flat()].map((row) => row.trace_id))];
  if (traceIds.length === 0) return { traceIds, rows: [] };
  // The summaries first (a key read of `traces`, one row a version), then the spans of only the
  // traces the store has a summary row for: a trace that has none has no stored spans but those
  // of a statement under way, which are held here. Traces sent once, the most common, so cost
  // one light statement.
  const storedSummaries = await selectPreviousSummaries(clickhouse, { workspaceId, traceIds });
  const summarized = new Set(storedSummaries.map((summary) => summary.trace_id));
  // A trace the store does not hold, that one queued write alone carries, is summarized from
  // that write, once for every read while it waits (`summariesOfWrite`); the others are replayed.
  const alone = soleWrites(applying, queued);
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
  const spans = new Map<string, StoredFacts>();
  const live = (ids: Set<string>) => [...spans.values()].filter((span) => span.is_deleted === 0 && ids.has(span.trace_id));
  for (const span of storedSpans) keep(spans, span);
  let previous: PreviousSummary[] = storedSummaries.filter((summary) => summary.is_deleted === 0);

  // The statement under way, as it will summarize its traces.
  let newest = floor;
  if (applying.length > 0) {
    for (const row of applying) keep(spans, factsOf(row));
    const first = await summarizeTracesInTurns(
      workspaceId,
      live(new Set(applying.map((r) => r.trace_id))),
      previous,
      floor.toString(),
      applying,
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
  return {
    traceIds,
    rows: [...fromWrites, ...(await summarizeTracesInTurns(workspaceId, live(replayed), previous, raised.floor.toString(), written))],
  };
}

const spanKey = (span: { trace_id: string; span_id: string }) => `${span.trace_id}\u0000${span.span_id}`;

/** The engine keeps the highest version of a span (LIMIT 1 BY after ORDER BY version DESC); the later of equals here. */
function keep(spans: Map<string, StoredFacts>, span: StoredFacts): void {
  const held = spans.get(spanKey(span));
  if (!held || compareVersion(span.version, held.version) >= 0) spans.set(spanKey(span), span);
}

/** For each trace the queued writes touch, the one write carrying it; none when several do or the statement under way does. */
function soleWrites(applying: readonly SpanRow[], queued: ReadonlyArray<readonly SpanRow[]>): Map<string, readonly SpanRow[] | undefined> {
  const sole = new Map<string, readonly SpanRow[] | undefined>();
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
const writeSummaries = new WeakMap<readonly SpanRow[], Map<string, TraceSummaryRow>>();

/**
 * The summaries of the traces of one write, for traces the store does not hold and no other
 * unapplied write touches: the replay would summarize them from these rows alone, with no
 * previous summary. A request gives each trace's rows one version, which its flush may raise;
 * a summary then differs only in its `version`, which no read of the overlay uses (overlayOf),
 * so it is computed once per write instead of at every read. A trace whose rows carry several
 * versions (the same trace twice in one request) gets none here: it is replayed.
 */
function summariesOfWrite(workspaceId: string, rows: readonly SpanRow[] | undefined): Map<string, TraceSummaryRow> | undefined {
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

/** What a list lays over the store for the workspace's unapplied writes, and how it waits for some. */
export interface UnappliedTraces {
  overlay: TraceOverlay;
  /** The list items of the overlay's traces, by trace id. */
  items: Map<string, string>;
  /** Resolves once these traces' answered writes are applied (undefined: nothing to wait for). */
  applied(traceIds: string[]): Promise<void> | undefined;
}

/** The overlay of the workspace's writes not yet applied, if any (a 503 while the store is unavailable). */
export async function unappliedTraces(
  writer: WriteBatcher,
  clickhouse: ClickHouseClient,
  workspaceId: string,
): Promise<UnappliedTraces | undefined> {
  const unapplied = writer.unapplied(workspaceId);
  if (!unapplied) return undefined;
  const { traceIds, rows } = await pendingSummaries(clickhouse, workspaceId, unapplied);
  const laid = overlayOf(traceIds, rows);
  return laid && { ...laid, applied: (ids) => writer.readable(workspaceId, ids) };
}

/** A span row as the key read's rows are kept: live (the span row holds every column the summary reads). */
const factsOf = (row: SpanRow): StoredFacts => ({ ...row, is_deleted: 0 });
