import { fromKeyValues } from '../wire/any-value.js';
import { hitsOf, mapIO, mapKind, mapMetrics, mapStatus, mapTraceFields, mergeIO, type TraceFields } from './mapping.js';
import {
  otelSpanKinds,
  type Attributes,
  type NativeSpan,
  type NativeTrace,
  type PlainExportRequest,
  type PlainId,
  type PlainInt64,
  type PlainSpan,
} from '../wire/model.js';
import { firstTokenEvents, isGenAiContentEvent, messagesFromEvents } from '../conventions/genai-events.js';
import { toSpanIO } from '../values/io-genai.js';
import { sizeOfValue, trimAttributes, type Trim } from '../values/trim.js';
import { limits } from '../../../model/schemas.js';
import { putKey } from '../../../../http/wire/json-bounds.js';

export interface SpanRejection {
  traceId: string;
  spanId: string;
  reason: string;
}

export interface NormalizedExport {
  traces: NativeTrace[];
  /** Spans turned away before the native validation (bad ids, missing times). */
  rejections: SpanRejection[];
  spanCount: number;
}

const hexPattern = /^[0-9a-f]+$/;
const zeroPattern = /^0+$/;

/** A hex id of `bytes` bytes; '' when absent, undefined when malformed or all zero. */
export function toHexId(id: PlainId | undefined, bytes: number): string | undefined {
  if (id === undefined) return '';
  let hex: string;
  if (typeof id === 'string') {
    if (id === '') return '';
    hex = id.toLowerCase();
    // OTLP/JSON ids are hex; some older senders used base64 of the bytes: take both.
    if (hex.length !== bytes * 2 && id.length === Math.ceil(bytes / 3) * 4) hex = Buffer.from(id, 'base64').toString('hex');
  } else {
    // Bytes (protobuf): hex by construction, so only the length and all-zero checks apply.
    if (id.byteLength === 0) return '';
    if (id.byteLength !== bytes) return undefined;
    let zero = true;
    for (let i = 0; i < id.length && zero; i++) zero = id[i] === 0;
    if (zero) return undefined;
    return (Buffer.isBuffer(id) ? id : Buffer.from(id.buffer, id.byteOffset, id.byteLength)).toString('hex');
  }
  if (hex.length !== bytes * 2 || !hexPattern.test(hex) || zeroPattern.test(hex)) return undefined;
  return hex;
}

/** A unix time split into whole seconds and nanoseconds: both exact as doubles. */
export interface UnixNanos {
  seconds: number;
  nanos: number;
}

// Up to 9999-12-31T23:59:59: what ISO 8601 with four-digit years holds.
const maxSeconds = 253402300799;
const digits = /^\d{1,21}$/;

/**
 * Reads an OTLP fixed64 time (decimal text, or a JSON number) without BigInt and without
 * rounding: the text is cut into seconds and nanoseconds. Zero, negative or malformed: none.
 */
export function parseUnixNanos(value: PlainInt64 | undefined): UnixNanos | undefined {
  if (value === undefined) return undefined;
  const text =
    typeof value === 'number' ? (Number.isInteger(value) && value > 0 ? value.toLocaleString('en-US', { useGrouping: false }) : '') : value;
  if (!digits.test(text)) return undefined;
  const seconds = text.length > 9 ? Number(text.slice(0, -9)) : 0;
  const nanos = Number(text.slice(-9));
  if ((seconds === 0 && nanos === 0) || seconds > maxSeconds) return undefined;
  return { seconds, nanos };
}

/** b - a in nanoseconds (exact below 104 days, which covers any span). */
const nanosBetween = (a: UnixNanos, b: UnixNanos) => (b.seconds - a.seconds) * 1e9 + (b.nanos - a.nanos);

let cachedSecond = -1;
let cachedPrefix = '';

/** ISO 8601 with microseconds: 2025-01-01T00:00:00.123456Z. */
export function unixNanosToIso(time: UnixNanos): string {
  // Spans of one export mostly share their seconds: format each second once.
  if (time.seconds !== cachedSecond) {
    cachedPrefix = new Date(time.seconds * 1000).toISOString().slice(0, 19);
    cachedSecond = time.seconds;
  }
  // The microseconds as six digits: 1,000,000 added, its leading 1 cut.
  return `${cachedPrefix}.${String(1_000_000 + Math.floor(time.nanos / 1000)).slice(1)}Z`;
}

const toMs = (time: UnixNanos) => time.seconds * 1000 + time.nanos / 1e6;
const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

function buildSpan(
  span: PlainSpan,
  ids: { spanId: string; parentSpanId: string },
  start: UnixNanos,
  end: UnixNanos,
  context: { resource: Attributes; resourceFields: TraceFields; scope: Record<string, unknown> },
) {
  const attributes = fromKeyValues(span.attributes);
  const startMs = toMs(start);
  // The rows each table may apply, found once from the span's keys.
  const hits = hitsOf(attributes);
  const { kind, consumed: kindKeys, noMetrics } = mapKind(attributes, hits);
  const { fields, consumed: metricKeys } = noMetrics ? { fields: {}, consumed: [] } : mapMetrics(attributes, { startMs }, hits);
  const { input: mappedInput, output: mappedOutput, consumed: ioKeys, duplicates, trims } = mapIO(attributes, hits);
  const traceFields = mapTraceFields(attributes, context.resource, context.resourceFields, hits);
  const trimmed: Trim[] = trims; // mapIO's own list, extended here
  for (const key of duplicates) trimmed.push({ key, reason: 'repeats the mapped messages', chars: sizeOfValue(attributes[key]) });
  // A fresh object of the keys left, rather than deletes (which slow every later access).
  const consumed = new Set(kindKeys);
  for (const key of metricKeys) consumed.add(key);
  for (const key of ioKeys) consumed.add(key);
  let rest: Attributes | undefined;
  for (const key in attributes) {
    if (consumed.has(key)) continue;
    putKey((rest ??= {}), key, attributes[key] ?? null);
  }
  if (rest) rest = trimAttributes(rest, '', trimmed);

  let input = mappedInput;
  let output = mappedOutput;
  const plainEvents = span.events ?? [];
  // GenAI content sent as span events (the event conventions) fills a conversation that the
  // attributes left empty; those events are then stored as the messages, not twice.
  const contentFromEvents =
    plainEvents.length > 0 &&
    !input?.messages?.length &&
    !output?.messages?.length &&
    plainEvents.some((e) => e.name !== undefined && isGenAiContentEvent(e.name));
  let ttftMs = fields.ttftMs;
  const events: NonNullable<NativeSpan['events']> = [];
  const contentEvents: { name: string; body: unknown }[] = [];
  let dropped = span.droppedEventsCount ?? 0;
  for (const event of plainEvents) {
    const name = event.name || 'event';
    const at = parseUnixNanos(event.timeUnixNano) ?? start;
    if (ttftMs === undefined && firstTokenEvents.includes(name)) ttftMs = Math.max(0, nanosBetween(start, at) / 1e6);
    const eventAttributes = fromKeyValues(event.attributes);
    if (contentFromEvents && isGenAiContentEvent(name)) {
      contentEvents.push({ name, body: eventAttributes });
      continue;
    }
    // Never reject a span for its number of events: the first ones are kept, the rest counted.
    if (events.length >= limits.eventsPerSpan) {
      dropped++;
      continue;
    }
    const attrs =
      Object.keys(eventAttributes).length > 0 ? trimAttributes(eventAttributes, `events.${events.length}.`, trimmed) : undefined;
    events.push({ name: cut(name, limits.nameLength), timestamp: unixNanosToIso(at), ...(attrs ? { attributes: attrs } : {}) });
  }
  if (contentEvents.length > 0) {
    const converted = messagesFromEvents(contentEvents);
    if (converted.input.messages.length > 0 || converted.input.extras.length > 0)
      mergeIO((input ??= {}), toSpanIO(converted.input, 'events'));
    if (converted.output.messages.length > 0 || converted.output.extras.length > 0)
      mergeIO((output ??= {}), toSpanIO(converted.output, 'events'));
  }

  const { status, message: statusMessage } = mapStatus(attributes, span.status, plainEvents);

  const otel: Record<string, unknown> = { spanKind: otelSpanKinds[span.kind ?? 0] ?? 'unspecified' };
  if (span.traceState) otel.traceState = span.traceState;
  if (span.links?.length) {
    otel.links = span.links.map((l) => ({
      traceId: toHexId(l.traceId, 16) ?? '',
      spanId: toHexId(l.spanId, 8) ?? '',
      attributes: fromKeyValues(l.attributes),
    }));
  }
  if (span.droppedAttributesCount || span.droppedEventsCount || span.droppedLinksCount) {
    otel.dropped = {
      attributes: span.droppedAttributesCount ?? 0,
      events: span.droppedEventsCount ?? 0,
      links: span.droppedLinksCount ?? 0,
    };
  }
  if (trimmed.length > 0) otel.trimmed = trimmed;

  const native: NativeSpan = {
    spanId: ids.spanId,
    name: cut(span.name || '(unnamed)', limits.nameLength),
    kind,
    startTime: unixNanosToIso(start),
    endTime: unixNanosToIso(end),
    durationMs: nanosBetween(start, end) / 1e6,
    status,
    metadata: { resource: context.resource, scope: context.scope, otel },
  };
  if (ids.parentSpanId) native.parentSpanId = ids.parentSpanId;
  if (input) native.input = input;
  if (output) native.output = output;
  for (const field in fields) (native as unknown as Record<string, unknown>)[field] = (fields as Record<string, unknown>)[field];
  if (ttftMs !== undefined) native.ttftMs = ttftMs;
  if (native.model !== undefined) native.model = cut(native.model, limits.modelLength);
  if (native.provider !== undefined) native.provider = cut(native.provider, limits.modelLength);
  if (native.promptName !== undefined) native.promptName = cut(native.promptName, limits.promptNameLength);
  if (native.promptVersion !== undefined) native.promptVersion = cut(native.promptVersion, limits.labelLength);
  if (statusMessage) native.statusMessage = cut(statusMessage, limits.statusMessageLength);
  if (rest) native.attributes = rest;
  if (events.length > 0) native.events = events;
  if (dropped > 0) native.droppedEvents = dropped;
  return { native, traceFields };
}

interface TraceEntry {
  trace: NativeTrace;
  /** Trace fields already taken from the root span, which later spans do not override. */
  fromRoot: Set<keyof TraceFields>;
  bySpanId: Map<string, number>;
}

/** A trace field from the root span wins; otherwise the first span that has it. */
function setTraceFields(entry: TraceEntry, fields: TraceFields, isRoot: boolean) {
  const trace = entry.trace as unknown as Record<string, unknown>;
  for (const key in fields) {
    const field = key as keyof TraceFields;
    const value = fields[field];
    if (isRoot) {
      // A root span sent again in the same export replaces the first copy, its fields too.
      trace[field] = value;
      entry.fromRoot.add(field);
    } else if (!entry.fromRoot.has(field) && trace[field] === undefined) trace[field] = value;
  }
}

/**
 * Turns one export request into native traces, one per trace id, and lists the spans that
 * cannot become native spans (no usable ids or times: the only reasons to turn a span away).
 * The trace name is the root span's name unless a trace-name attribute gives one; the other
 * trace fields come from the root span (or else the first span that has them), then its resource.
 */
export function normalizeExport(request: PlainExportRequest): NormalizedExport {
  const traces = new Map<string, TraceEntry>();
  const rejections: SpanRejection[] = [];
  let spanCount = 0;
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = fromKeyValues(resourceSpans.resource?.attributes);
    const resourceFields = mapTraceFields({}, resource);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scopeInfo = scopeSpans.scope ?? {};
      const scope: Record<string, unknown> = { name: scopeInfo.name ?? '', ...(scopeInfo.version ? { version: scopeInfo.version } : {}) };
      const scopeAttributes = fromKeyValues(scopeInfo.attributes);
      if (Object.keys(scopeAttributes).length > 0) scope.attributes = scopeAttributes;
      for (const span of scopeSpans.spans ?? []) {
        spanCount++;
        const traceId = toHexId(span.traceId, 16);
        const spanId = toHexId(span.spanId, 8);
        const parentSpanId = toHexId(span.parentSpanId, 8);
        const start = parseUnixNanos(span.startTimeUnixNano);
        const end = parseUnixNanos(span.endTimeUnixNano);
        let reason: string | undefined;
        if (!traceId) reason = 'traceId is missing or not 16 bytes of hex (or all zero)';
        else if (!spanId) reason = 'spanId is missing or not 8 bytes of hex (or all zero)';
        else if (parentSpanId === undefined) reason = 'parentSpanId is not 8 bytes of hex (or all zero)';
        else if (parentSpanId === spanId) reason = 'parentSpanId names the span itself';
        else if (start === undefined) reason = 'startTimeUnixNano is missing or out of range';
        else if (end === undefined) reason = 'endTimeUnixNano is missing or out of range';
        else if (nanosBetween(start, end) < 0) reason = 'endTimeUnixNano is before startTimeUnixNano';
        else {
          const { native, traceFields } = buildSpan(span, { spanId, parentSpanId }, start, end, { resource, resourceFields, scope });
          let entry = traces.get(traceId);
          if (!entry)
            traces.set(traceId, (entry = { trace: { traceId, source: 'otel', spans: [] }, fromRoot: new Set(), bySpanId: new Map() }));
          // A span sent twice in one export (a retried batch) is one span: the last copy wins.
          const earlier = entry.bySpanId.get(spanId);
          if (earlier === undefined) entry.bySpanId.set(spanId, entry.trace.spans.push(native) - 1);
          else entry.trace.spans[earlier] = native;
          const isRoot = !parentSpanId;
          if (isRoot && traceFields.name === undefined) traceFields.name = native.name;
          setTraceFields(entry, traceFields, isRoot);
        }
        if (reason) rejections.push({ traceId: traceId || '', spanId: spanId || '', reason });
      }
    }
  }
  return { traces: [...traces.values()].map((e) => e.trace), rejections, spanCount };
}
