import { fromStoredTime } from '../model/stored-time.js';
import { inTurns } from '../../http/server/turns.js';
import type { TraceListItem } from '../model/schemas.js';
import type { PreviousSummary, TraceSummaryRow } from '../tables/traces-table.js';
import type { SpanFacts } from '../tables/spans-table.js';
import { compareText, costBySource, countedSpans, modelSpan, spanGroups, sumSent } from './summary-usage.js';

export type { PreviousSummary, SpanGroup, TraceSummaryRow } from '../tables/traces-table.js';
export type { SpanFacts } from '../tables/spans-table.js';

/**
 * A trace's summary row (clickhouse/0001, 0003, 0004), computed from its deduplicated live
 * spans and its previous summary: the rules of DESIGN.md and the "Summary fields" of docs/api.md.
 *
 * This runs in the service, not in the engine: the statement that computed it in SQL cost
 * about 80 ms of analysis whatever the number of rows (measured: the same statement over a
 * trace that does not exist took 79 of its 100 ms of CPU), so every ingest paid it once per
 * flush. A key read of the narrow span columns and a plain insert cost a fraction of that.
 * The rows it reads are exact (every version of a span lies on one shard), so the summary
 * is the same on a server and a cluster.
 */

const isRoot = (span: SpanFacts) => span.parent_span_id === '';
type TextField = 'trace_name' | 'session_id' | 'environment' | 'service' | 'user_id';

/** Versions as decimal text, compared as the numbers they are. */
export const compareVersion = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : compareText(a, b));

const spanKey = (span: { trace_id: string; span_id: string }) => `${span.trace_id}\u0000${span.span_id}`;

/** The engine keeps the highest version of a span (LIMIT 1 BY after ORDER BY version DESC); the later of equals here. */
export function keepLatest<T extends { trace_id: string; span_id: string; version: string }>(spans: Map<string, T>, span: T): void {
  const held = spans.get(spanKey(span));
  if (!held || compareVersion(span.version, held.version) >= 0) spans.set(spanKey(span), span);
}

/** The latest non-empty value of a trace-level field over the spans, with the version that carried it ('0' when none did). */
function latestSent<T extends string | string[]>(
  spans: SpanFacts[],
  read: (span: SpanFacts) => T,
): { value: T | undefined; version: string } {
  let value: T | undefined;
  let version = '0';
  for (const span of spans) {
    const candidate = read(span);
    if (candidate.length > 0 && compareVersion(span.version, version) > 0) {
      value = candidate;
      version = span.version;
    }
  }
  return { value, version };
}

/**
 * A payload that leaves a trace field out keeps the value an earlier one sent, even once the
 * spans that carried it were replaced: the previous summary remembers it.
 */
function keepEarlier<T extends string | string[]>(
  sent: { value: T | undefined; version: string },
  previous: T | undefined,
  previousVersion: string,
  empty: T,
): T {
  if (previous === undefined || previous.length === 0 || compareVersion(sent.version, previousVersion) >= 0) return sent.value ?? empty;
  return previous;
}

/**
 * A trace's start time: the earliest start of its live spans (at least one), as stored text
 * ('YYYY-MM-DD hh:mm:ss.ffffff', whose order is the time's). The newest-first list orders
 * unapplied traces by it too (pending-summaries.ts).
 */
export function earliestStart(spans: ReadonlyArray<{ start_time: string }>): string {
  let start = spans[0]!.start_time;
  for (const span of spans) if (compareText(span.start_time, start) < 0) start = span.start_time;
  return start;
}

/** With several root spans the earliest one (then the lowest span id) speaks for the trace. */
function rootSpan(spans: SpanFacts[]): SpanFacts | undefined {
  let root: SpanFacts | undefined;
  for (const span of spans) {
    if (!isRoot(span)) continue;
    if (
      !root ||
      compareText(span.start_time, root.start_time) < 0 ||
      (span.start_time === root.start_time && compareText(span.span_id, root.span_id) < 0)
    ) {
      root = span;
    }
  }
  return root;
}

/** The list item, as traceListItemSchema gives it: '' becomes null, unsent usage is left out. */
function listItem(row: Omit<TraceSummaryRow, 'item'>): string {
  const item: TraceListItem = {
    traceId: row.trace_id,
    name: row.name || null,
    sessionId: row.session_id || null,
    source: row.source,
    environment: row.environment || null,
    service: row.service || null,
    userId: row.user_id || null,
    tags: row.tags,
    status: row.status as TraceListItem['status'],
    traceKind: (row.trace_kind || null) as TraceListItem['traceKind'],
    startTime: fromStoredTime(row.start_time),
    endTime: row.end_time === null ? null : fromStoredTime(row.end_time),
    durationMs: row.duration_ms,
    ...(row.model !== '' && { model: row.model }),
    ...(row.provider !== '' && { provider: row.provider }),
    ...(row.input_tokens !== null && { inputTokens: row.input_tokens }),
    ...(row.output_tokens !== null && { outputTokens: row.output_tokens }),
    ...(row.total_tokens !== null && { totalTokens: row.total_tokens }),
    ...(row.cost_usd !== null && { costUsd: row.cost_usd }),
    spanCount: row.span_count,
    errorCount: row.error_count,
  };
  return JSON.stringify(item);
}

/**
 * One trace's summary from its live spans (at least one) and its previous summary, if any.
 * `written` are the rows the same flush wrote for the trace, replaced ones included: a trace
 * field one of its writes sent and a later write of the same flush left out is kept, as it
 * would be had each write been flushed alone (the summary between them remembering it).
 */
export function summarizeTrace(
  workspaceId: string,
  spans: SpanFacts[],
  previous: PreviousSummary | undefined,
  floor: string,
  written: SpanFacts[] = [],
): TraceSummaryRow {
  const first = spans[0]!;
  // A summary replaces the one before it: its version is the floor given (write-batcher.ts: at
  // least every span version it saw), and above the previous summary's.
  const version = previous && compareVersion(previous.version, floor) >= 0 ? (BigInt(previous.version) + 1n).toString() : floor;
  const root = rootSpan(spans);
  const countedSet = countedSpans(spans);
  const counted = [...countedSet];
  const model = modelSpan(spans);
  const before = previous?.version ?? '0';
  /** What the trace remembers of a field before these spans: the previous summary's, or newer, a write of this flush's. */
  const earlier = <T extends string | string[]>(read: (span: SpanFacts) => T, previousValue: T | undefined) => {
    const sent = latestSent(written, read);
    const newer = sent.value !== undefined && (!previousValue?.length || compareVersion(sent.version, before) > 0);
    return newer ? sent : { value: previousValue, version: before };
  };
  const kept = <T extends string | string[]>(read: (span: SpanFacts) => T, previousValue: T | undefined, empty: T) => {
    const remembered = earlier(read, previousValue);
    return keepEarlier(latestSent(spans, read), remembered.value, remembered.version, empty);
  };
  const text = (field: TextField, previousValue: string | undefined) => kept((s) => s[field], previousValue, '');
  let source = first;
  let errors = 0;
  for (const span of spans) {
    if (compareVersion(span.version, source.version) > 0) source = span;
    if (span.status === 'error') errors += 1;
  }
  const row: Omit<TraceSummaryRow, 'item'> = {
    workspace_id: workspaceId,
    trace_id: first.trace_id,
    name: text('trace_name', previous?.name),
    session_id: text('session_id', previous?.session_id),
    source: source.source,
    environment: text('environment', previous?.environment),
    service: text('service', previous?.service),
    user_id: text('user_id', previous?.user_id),
    tags: kept((s) => s.tags, previous?.tags, []),
    status: root ? (root.status === 'error' ? 'error' : 'completed') : 'running',
    trace_kind: root?.kind ?? '',
    start_time: earliestStart(spans),
    end_time: root?.end_time ?? null,
    duration_ms: root?.duration_ms ?? null,
    model: model?.model ?? '',
    provider: model?.provider ?? '',
    input_tokens: sumSent(counted, 'input_tokens'),
    output_tokens: sumSent(counted, 'output_tokens'),
    total_tokens: sumSent(counted, 'total_tokens'),
    cost_usd: sumSent(counted, 'cost_usd'),
    ...costBySource(counted),
    span_count: spans.length,
    error_count: errors,
    by_model: spanGroups(spans, 'model', countedSet),
    by_provider: spanGroups(spans, 'provider', countedSet),
    by_kind: spanGroups(spans, 'kind', countedSet),
    ttfts: spans.flatMap((s) => (s.ttft_ms === null ? [] : [{ model: s.model, provider: s.provider, kind: s.kind, ttft_ms: s.ttft_ms }])),
    version,
    is_deleted: 0,
  };
  return { ...row, item: listItem(row) };
}

/** Summaries of every trace that has live spans; traces whose spans are all deleted get none. */
export function summarizeTraces(
  workspaceId: string,
  spans: SpanFacts[],
  previous: PreviousSummary[],
  floor: string,
  /** The rows the flush wrote, replaced ones included (summarizeTrace). */
  written: SpanFacts[] = [],
): TraceSummaryRow[] {
  return traceInputs(spans, previous, written).map(([group, before, own]) => summarizeTrace(workspaceId, group, before, floor, own));
}

/** summarizeTraces, pausing every few ms for the thread's other work (`inTurns`). */
export async function summarizeTracesInTurns(
  workspaceId: string,
  spans: SpanFacts[],
  previous: PreviousSummary[],
  floor: string,
  written: SpanFacts[] = [],
): Promise<TraceSummaryRow[]> {
  const turn = inTurns();
  const rows: TraceSummaryRow[] = [];
  for (const [group, before, own] of traceInputs(spans, previous, written)) {
    await turn();
    rows.push(summarizeTrace(workspaceId, group, before, floor, own));
  }
  return rows;
}

/** Each trace's spans in span id order, its previous summary and its written rows. */
function traceInputs(spans: SpanFacts[], previous: PreviousSummary[], written: SpanFacts[]) {
  const byTrace = groupByTrace(spans);
  const writtenByTrace = groupByTrace(written);
  const previousByTrace = new Map(previous.map((p) => [p.trace_id, p]));
  // In span id order, whatever order the spans were read in: sums of floats then come out the
  // same to the last bit, whether a flush or a read over unapplied writes computes them.
  return [...byTrace.values()].map((group) => {
    const traceId = group[0]!.trace_id;
    return [group.sort((a, b) => compareText(a.span_id, b.span_id)), previousByTrace.get(traceId), writtenByTrace.get(traceId)] as const;
  });
}

function groupByTrace(spans: SpanFacts[]): Map<string, SpanFacts[]> {
  const byTrace = new Map<string, SpanFacts[]>();
  for (const span of spans) {
    const group = byTrace.get(span.trace_id);
    if (group) group.push(span);
    else byTrace.set(span.trace_id, [span]);
  }
  return byTrace;
}
