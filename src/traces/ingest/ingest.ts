import { firstIssuePerPath, issuePath } from '../../http/wire/errors.js';
import { putKey, repairLoneSurrogates } from '../../http/wire/json-bounds.js';
import { Turns } from '../../http/server/turns.js';
import { spanPricerFor, type IngestPricing, type SpanCost } from '../cost/pricing.js';
import type { SpanRow } from '../tables/spans-table.js';
import type { WriteBatcher } from '../writer/write-batcher.js';
import type { IngestActivity } from '../../contract/ingest-activity.js';
import { fromStoredTime, toStoredTime } from '../model/stored-time.js';
import { nextVersion } from '../model/version.js';
import { limits, traceSchema, type IngestResult, type Span, type StoredSpan, type Trace } from '../model/schemas.js';

/**
 * What storing traces takes, made once per app (src/app.ts) and handed to the native and OTLP
 * routes and the gRPC server: the writer, the pricing of generation spans without a cost
 * (cost/pricing.ts), and the thread's ingest turns (http/server/turns.ts), which parsing, validation
 * and the making of rows take one step at a time so reads go in between.
 */
export interface TraceIngest {
  writer: WriteBatcher;
  pricing: IngestPricing;
  turns: Turns;
  /**
   * Hears every request stored through this ingest: the app's external ingest notes it (what
   * the evaluators' worker yields to); the judges' own traces go through a copy without it.
   */
  activity?: IngestActivity;
}

/** The ingest of an app; without pricing given, generation spans are priced by the built-in table. */
export function traceIngestOf(
  writer: WriteBatcher,
  pricing: IngestPricing = { enabled: true },
  turns = new Turns(),
  activity?: IngestActivity,
): TraceIngest {
  return { writer, pricing, turns, ...(activity && { activity }) };
}

/**
 * Validates every trace on its own: valid ones are stored, invalid ones are reported by
 * index, traceId and path, never dropped silently. The OTLP bridge calls this too, with the
 * native traces it normalized.
 */
export async function ingestTraces(ingest: TraceIngest, workspaceId: string, traces: unknown[]): Promise<IngestResult> {
  const valid: Trace[] = [];
  const errors: IngestResult['errors'] = [];
  // Validated in the thread's ingest turns (http/server/turns.ts), a body of many traces over several.
  await ingest.turns.take();
  for (const [index, candidate] of traces.entries()) {
    await ingest.turns.pause();
    // Text no UTF-8 store can hold (a lone surrogate) is repaired to U+FFFD, never stored as is.
    const parsed = traceSchema.safeParse(repairLoneSurrogates(candidate));
    if (parsed.success) {
      valid.push(parsed.data);
      continue;
    }
    const traceId =
      typeof (candidate as { traceId?: unknown } | null)?.traceId === 'string' ? (candidate as { traceId: string }).traceId : null;
    for (const issue of firstIssuePerPath(parsed.error.issues).slice(0, limits.issuesPerTrace)) {
      errors.push({ index, traceId, path: issuePath(`traces.${index}`, issue.path), message: issue.message });
    }
  }
  await storeTraces(ingest, workspaceId, valid);
  return { accepted: valid.length, rejected: traces.length - valid.length, errors };
}

/**
 * Stores already-validated traces: their spans inserted, then the touched summaries recomputed
 * inside the engine, together with the writes of concurrent requests (write-batcher.ts).
 * Re-sent spans replace earlier ones (a newer version of the same key); a trace may arrive
 * over many calls. Generation spans without a cost are priced on the way (cost/pricing.ts).
 * Resolves once the traces are readable.
 */
export async function storeTraces({ writer, pricing, turns, activity }: TraceIngest, workspaceId: string, traces: Trace[]): Promise<void> {
  if (traces.length === 0) return;
  const ended = activity?.begin();
  try {
    const price = await spanPricerFor(pricing, workspaceId);
    // Rows a trace at a time, in the thread's ingest turns like the validation before them.
    const rows: SpanRow[] = [];
    for (const trace of traces) {
      await turns.pause();
      for (const row of toSpanRows(workspaceId, [trace], price)) rows.push(row);
    }
    await writer.write(workspaceId, rows, [...new Set(traces.map((t) => t.traceId))]);
  } finally {
    ended?.();
  }
}

// The rows of `spans`.

/**
 * Conversion from the wire shapes to the rows of `spans` (tables/spans-table.ts). Optional
 * fields that were not sent are stored as '' (strings) or NULL (numbers); `detail` holds the
 * span as the API returns it, with exactly the fields it was sent with.
 */

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
