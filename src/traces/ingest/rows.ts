import type { SpanCost } from '../cost/pricing.js';
import type { Span, StoredSpan, Trace } from '../model/schemas.js';
import type { SpanFacts } from '../tables/summary-rows.js';
import { putKey } from '../../http/json-bounds.js';

/**
 * Conversion from the wire shapes to the rows of `spans` (clickhouse/0001, 0003, 0004). Optional
 * fields that were not sent are stored as '' (strings) or NULL (numbers); `detail` holds the
 * span as the API returns it, with exactly the fields it was sent with.
 */

export interface SpanRow {
  workspace_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  name: string;
  kind: string;
  status: string;
  status_message: string;
  start_time: string;
  end_time: string;
  duration_ms: number;
  model: string;
  provider: string;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  reasoning_tokens: number | null;
  ttft_ms: number | null;
  /** 'provided' | 'computed' | 'none', '' for a span without a cost that was not priced (cost/pricing.ts). */
  cost_source: string;
  prompt_name: string;
  prompt_version: string;
  /** The StoredSpan as JSON text (storedSpanOf). */
  detail: string;
  /** attributes and metadata as string maps (stringMapOf), for queries by key (clickhouse/0008). */
  attributes_map: Record<string, string>;
  metadata_map: Record<string, string>;
  trace_name: string;
  session_id: string;
  source: string;
  environment: string;
  service: string;
  user_id: string;
  tags: string[];
  /** UInt64 as a decimal string: it does not fit a JS number exactly. */
  version: string;
}

/**
 * A span row as a write keeps it until its flush (write-batcher.ts): the columns the summaries
 * and the reads over unapplied writes use (SpanFacts) and its workspace. The rest (`detail`, the
 * attribute maps, the status message: most of a row's bytes) only the insert reads, and the
 * write's encoded lines hold it (pending-lines.ts); the row whole would be kept twice.
 */
export type PendingRow = SpanFacts & { workspace_id: string };

/** The pending row of a span row, field by field (no rest spread: one of these per span ingested). */
export function pendingRowOf(row: SpanRow): PendingRow {
  return {
    workspace_id: row.workspace_id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    version: row.version,
    trace_name: row.trace_name,
    session_id: row.session_id,
    environment: row.environment,
    service: row.service,
    user_id: row.user_id,
    tags: row.tags,
    source: row.source,
    parent_span_id: row.parent_span_id,
    status: row.status,
    kind: row.kind,
    start_time: row.start_time,
    end_time: row.end_time,
    duration_ms: row.duration_ms,
    model: row.model,
    provider: row.provider,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    total_tokens: row.total_tokens,
    cost_usd: row.cost_usd,
    cost_source: row.cost_source,
    ttft_ms: row.ttft_ms,
  };
}

let lastVersion = 0n;
const versionOrigin = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/**
 * Row versions: nanoseconds since the epoch on a monotonic clock, bumped by one when two
 * calls land on the same nanosecond, so every later ingest in this process wins and replicas
 * order by wall time.
 */
export function nextVersion(): bigint {
  const now = versionOrigin + process.hrtime.bigint();
  lastVersion = now > lastVersion ? now : lastVersion + 1n;
  return lastVersion;
}

/**
 * The rows of writes, given in the order they are applied, with versions that follow that
 * order. A request's rows get their version when it is parsed (`toSpanRows`), and requests may
 * be parsed in another order than they are applied (write-batcher.ts: several await room or
 * the log at once). A summary keeps a field of an earlier payload only over spans older than
 * itself (summary.ts, keepEarlier), so a write must carry a newer version than every span and
 * summary applied before it (`floor`): one that does not is raised just above. Summaries take
 * the newest span version applied, not the clock (recompute.ts), so a write parsed while an
 * earlier flush ran is not older than its summaries. A write applied again from the log after
 * a crash starts from a lower floor and never gets a newer version than the first time, so it
 * never overrides what came after it (a later write, a delete, a repricing: those take the
 * clock, far above). Returns the rows and the new floor.
 */
export function inApplyOrder<Row extends { version: string }>(writes: readonly Row[][], floor: bigint): { rows: Row[]; floor: bigint } {
  const rows: Row[] = [];
  for (const write of writes) {
    const raised = new Map<string, string>();
    for (const row of write) {
      let version = raised.get(row.version);
      if (version === undefined) {
        const own = BigInt(row.version);
        version = (own > floor ? own : floor + 1n).toString();
        raised.set(row.version, version);
      }
      rows.push(version === row.version ? row : { ...row, version });
    }
    for (const version of raised.values()) if (BigInt(version) > floor) floor = BigInt(version);
  }
  return { rows, floor };
}

/** ISO 8601 with any offset → 'YYYY-MM-DD hh:mm:ss.ffffff' in UTC, microseconds kept. */
const utcIso = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/;

export function toStoredTime(iso: string): string {
  // Most clients send UTC already: slice it instead of a Date round trip (two per span).
  const utc = utcIso.exec(iso);
  if (utc) return `${utc[1]} ${utc[2]}.${(utc[3] ?? '').padEnd(6, '0').slice(0, 6)}`;
  const ms = Date.parse(iso);
  const whole = new Date(Math.floor(ms / 1000) * 1000).toISOString();
  const fraction = (/\.(\d+)/.exec(iso)?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  return `${whole.slice(0, 10)} ${whole.slice(11, 19)}.${fraction}`;
}

/** 'YYYY-MM-DD hh:mm:ss[.ffffff]' (UTC) → ISO 8601; milliseconds unless microseconds are set. */
export function fromStoredTime(stored: string): string {
  const [date, time = '00:00:00'] = stored.split(' ');
  const [clock, fraction = ''] = time.split('.');
  const digits = fraction.padEnd(6, '0');
  const shown = digits.endsWith('000') ? digits.slice(0, 3) : digits;
  return `${date}T${clock}.${shown}Z`;
}

/**
 * A span as the API returns it: the fields it was sent with, in the order of SPEC.md's span
 * table, times in UTC as stored (fromStoredTime), and the cost found at ingest (`cost`: a
 * computed costUsd, its costSource and pricing, which a client cannot send). Migration 0003
 * builds the same JSON in SQL for older rows (its backfill, frozen in the migration).
 */
export function storedSpanOf(
  span: Span,
  startTime = toStoredTime(span.startTime),
  endTime = toStoredTime(span.endTime),
  cost: SpanCost = {},
): StoredSpan {
  const costUsd = span.costUsd ?? cost.costUsd;
  // Set one by one in the table's order (the JSON keeps it): neither spread from temporary
  // objects nor copied in a loop over the keys, each measured slower on ingest's hot path.
  const stored: Record<string, unknown> = { spanId: span.spanId };
  if (span.parentSpanId !== undefined) stored.parentSpanId = span.parentSpanId;
  stored.name = span.name;
  stored.kind = span.kind;
  if (span.input !== undefined) stored.input = span.input;
  if (span.output !== undefined) stored.output = span.output;
  stored.startTime = shownTime(span.startTime, startTime);
  stored.endTime = shownTime(span.endTime, endTime);
  stored.durationMs = span.durationMs;
  if (span.model !== undefined) stored.model = span.model;
  if (span.provider !== undefined) stored.provider = span.provider;
  if (span.inputTokens !== undefined) stored.inputTokens = span.inputTokens;
  if (span.outputTokens !== undefined) stored.outputTokens = span.outputTokens;
  if (span.totalTokens !== undefined) stored.totalTokens = span.totalTokens;
  if (span.cacheReadTokens !== undefined) stored.cacheReadTokens = span.cacheReadTokens;
  if (span.cacheWriteTokens !== undefined) stored.cacheWriteTokens = span.cacheWriteTokens;
  if (span.reasoningTokens !== undefined) stored.reasoningTokens = span.reasoningTokens;
  if (costUsd !== undefined) stored.costUsd = costUsd;
  if (cost.costSource !== undefined) stored.costSource = cost.costSource;
  if (cost.pricing !== undefined) stored.pricing = cost.pricing;
  if (span.ttftMs !== undefined) stored.ttftMs = span.ttftMs;
  stored.status = span.status;
  if (span.statusMessage !== undefined) stored.statusMessage = span.statusMessage;
  if (span.attributes !== undefined) stored.attributes = span.attributes;
  if (span.events !== undefined) stored.events = span.events;
  if (span.droppedEvents !== undefined) stored.droppedEvents = span.droppedEvents;
  if (span.metadata !== undefined) stored.metadata = span.metadata;
  if (span.promptName !== undefined) stored.promptName = span.promptName;
  if (span.promptVersion !== undefined) stored.promptVersion = span.promptVersion;
  return stored as StoredSpan;
}

/**
 * A time as the API returns it (`fromStoredTime` of its stored form). A UTC time sent to the
 * millisecond, as most clients send it, is returned as sent: no round trip through the stored
 * form.
 */
function shownTime(sent: string, stored: string): string {
  return sent.length === 24 && sent.charCodeAt(23) === 90 && sent.charCodeAt(19) === 46 && stored.endsWith('000')
    ? sent
    : fromStoredTime(stored);
}

/**
 * A JSON object as a map of strings: strings as they are, any other value as its JSON text,
 * exactly as the DEFAULT of the map columns computes it from `detail` (clickhouse/0008).
 */
export function stringMapOf(object: Record<string, unknown> | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  if (object === undefined) return map;
  for (const [key, value] of Object.entries(object)) {
    // JSON text leaves undefined members out; so does the map.
    if (value !== undefined) putKey(map, key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return map;
}

export function toSpanRow(workspaceId: string, trace: Trace, span: Span, version: string, cost: SpanCost = provisionalCost(span)): SpanRow {
  const startTime = toStoredTime(span.startTime);
  const endTime = toStoredTime(span.endTime);
  return {
    workspace_id: workspaceId,
    trace_id: trace.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId ?? '',
    name: span.name,
    kind: span.kind,
    status: span.status,
    status_message: span.statusMessage ?? '',
    start_time: startTime,
    end_time: endTime,
    duration_ms: span.durationMs,
    model: span.model ?? '',
    provider: span.provider ?? '',
    input_tokens: span.inputTokens ?? null,
    output_tokens: span.outputTokens ?? null,
    total_tokens: span.totalTokens ?? null,
    cost_usd: span.costUsd ?? cost.costUsd ?? null,
    cache_read_tokens: span.cacheReadTokens ?? null,
    cache_write_tokens: span.cacheWriteTokens ?? null,
    reasoning_tokens: span.reasoningTokens ?? null,
    ttft_ms: span.ttftMs ?? null,
    cost_source: cost.costSource ?? '',
    prompt_name: span.promptName ?? '',
    prompt_version: span.promptVersion ?? '',
    detail: JSON.stringify(storedSpanOf(span, startTime, endTime, cost)),
    attributes_map: stringMapOf(span.attributes),
    metadata_map: stringMapOf(span.metadata),
    trace_name: trace.name ?? '',
    session_id: trace.sessionId ?? '',
    source: trace.source,
    environment: trace.environment ?? '',
    service: trace.service ?? '',
    user_id: trace.userId ?? '',
    tags: trace.tags ?? [],
    version,
  };
}

/** Without pricing (turned off, or rows built outside ingest), a sent cost is still marked provided. */
const provisionalCost = (span: Span): SpanCost => (span.costUsd === undefined ? {} : { costSource: 'provided' });

/**
 * Every span row of a list of traces; later traces get later versions (the last one sent
 * wins). `price` (cost/pricing.ts spanPricerFor) gives each span its cost at ingest.
 */
export function toSpanRows(workspaceId: string, traces: Trace[], price: (span: Span) => SpanCost = provisionalCost): SpanRow[] {
  const rows: SpanRow[] = [];
  for (const trace of traces) {
    const version = nextVersion().toString();
    for (const span of trace.spans) rows.push(toSpanRow(workspaceId, trace, span, version, price(span)));
  }
  return rows;
}
