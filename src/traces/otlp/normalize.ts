import { fromKeyValues } from './any-value.js';
import { mapIO, mapKind, mapMetrics, mapTraceFields } from './mapping.js';
import { otelSpanKinds, type Attributes, type NativeSpan, type NativeTrace, type PlainExportRequest, type PlainId, type PlainInt64, type PlainSpan } from './model.js';

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
    if (id.byteLength === 0) return '';
    hex = Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
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
  const text = typeof value === 'number' ? (Number.isInteger(value) && value > 0 ? value.toLocaleString('en-US', { useGrouping: false }) : '') : value;
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
  return `${cachedPrefix}.${String(Math.floor(time.nanos / 1000)).padStart(6, '0')}Z`;
}

const statuses = ['unset', 'ok', 'error'] as const;

function buildSpan(span: PlainSpan, ids: { spanId: string; parentSpanId: string }, start: UnixNanos, end: UnixNanos, context: { resource: Attributes; scope: Record<string, unknown> }) {
  const attributes = fromKeyValues(span.attributes);
  const { kind, consumed: kindKeys } = mapKind(attributes);
  const { fields, consumed: metricKeys } = mapMetrics(attributes);
  const { input, output, consumed: ioKeys } = mapIO(attributes);
  const traceFields = mapTraceFields(attributes, context.resource);
  // A fresh object of the keys left, rather than deletes (which slow every later access).
  const consumed = new Set([...kindKeys, ...metricKeys, ...ioKeys]);
  let rest: Attributes | undefined;
  for (const key in attributes) {
    if (consumed.has(key)) continue;
    (rest ??= {})[key] = attributes[key]!;
  }

  const code = span.status?.code ?? 0;
  const status = statuses[code] ?? 'unset';
  const events = (span.events ?? []).map((event) => {
    const at = parseUnixNanos(event.timeUnixNano) ?? start;
    const eventAttributes = fromKeyValues(event.attributes);
    return {
      name: event.name || 'event',
      timestamp: unixNanosToIso(at),
      ...(Object.keys(eventAttributes).length > 0 ? { attributes: eventAttributes } : {}),
    };
  });
  let statusMessage = span.status?.message || undefined;
  if (!statusMessage && status === 'error') {
    const exception = events.find((e) => e.name === 'exception');
    const message = exception?.attributes?.['exception.message'];
    if (typeof message === 'string' && message) statusMessage = message;
  }

  const otel: Record<string, unknown> = { spanKind: otelSpanKinds[span.kind ?? 0] ?? 'unspecified' };
  if (span.traceState) otel.traceState = span.traceState;
  if (span.links?.length) {
    otel.links = span.links.map((l) => ({ traceId: toHexId(l.traceId, 16) ?? '', spanId: toHexId(l.spanId, 8) ?? '', attributes: fromKeyValues(l.attributes) }));
  }
  const dropped = { attributes: span.droppedAttributesCount ?? 0, events: span.droppedEventsCount ?? 0, links: span.droppedLinksCount ?? 0 };
  if (dropped.attributes || dropped.events || dropped.links) otel.dropped = dropped;

  const native: NativeSpan = {
    spanId: ids.spanId,
    name: span.name || '(unnamed)',
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
  Object.assign(native, fields);
  if (statusMessage) native.statusMessage = statusMessage;
  if (rest) native.attributes = rest;
  if (events.length > 0) native.events = events;
  return { native, traceFields };
}

/**
 * Turns one export request into native traces, one per trace id, and lists the spans that
 * cannot become native spans. The trace name is the root span's name; environment and
 * session come from the root span (or else the first span that has them), then its resource.
 */
export function normalizeExport(request: PlainExportRequest): NormalizedExport {
  const traces = new Map<string, { trace: NativeTrace; fieldsFromRoot: boolean; bySpanId: Map<string, number> }>();
  const rejections: SpanRejection[] = [];
  let spanCount = 0;
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = fromKeyValues(resourceSpans.resource?.attributes);
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
        const reject = (reason: string) => rejections.push({ traceId: traceId || '', spanId: spanId || '', reason });
        if (!traceId) reject('traceId is missing or not 16 bytes of hex (or all zero)');
        else if (!spanId) reject('spanId is missing or not 8 bytes of hex (or all zero)');
        else if (parentSpanId === undefined) reject('parentSpanId is not 8 bytes of hex (or all zero)');
        else if (start === undefined) reject('startTimeUnixNano is missing or out of range');
        else if (end === undefined) reject('endTimeUnixNano is missing or out of range');
        else if (nanosBetween(start, end) < 0) reject('endTimeUnixNano is before startTimeUnixNano');
        else {
          const { native, traceFields: fields } = buildSpan(span, { spanId, parentSpanId }, start, end, { resource, scope });
          let entry = traces.get(traceId);
          if (!entry) traces.set(traceId, (entry = { trace: { traceId, source: 'otel', spans: [] }, fieldsFromRoot: false, bySpanId: new Map() }));
          // A span sent twice in one export (a retried batch) is one span: the last copy wins.
          const earlier = entry.bySpanId.get(spanId);
          if (earlier === undefined) entry.bySpanId.set(spanId, entry.trace.spans.push(native) - 1);
          else entry.trace.spans[earlier] = native;
          const isRoot = !parentSpanId;
          if (isRoot) entry.trace.name = native.name;
          if (isRoot || !entry.fieldsFromRoot) {
            if (isRoot) entry.fieldsFromRoot = true;
            if (fields.environment && (isRoot || !entry.trace.environment)) entry.trace.environment = fields.environment;
            if (fields.sessionId && (isRoot || !entry.trace.sessionId)) entry.trace.sessionId = fields.sessionId;
          }
        }
      }
    }
  }
  return { traces: [...traces.values()].map((e) => e.trace), rejections, spanCount };
}
