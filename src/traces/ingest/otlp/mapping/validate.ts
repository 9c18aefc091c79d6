import { maxJsonDepth, repairLoneSurrogates } from '../../../../http/wire/json-bounds.js';
import { limits, spanKinds, spanSchema, tagSchema, traceSchema, type Span, type SpanIO, type Trace } from '../../../model/schemas.js';
import type { NativeTrace } from '../wire/model.js';
import type { SpanRejection } from './normalize.js';

/**
 * The bridge's one validation pass over the spans it built (docs/decisions/050). The native
 * span schema decides; but most of what it checks, the bridge made true by construction (ids
 * from bytes, times from unix nanoseconds, kinds and statuses from its tables, names cut to
 * their limits, plain objects of JSON values). `plainlyValid` checks only what construction does
 * not settle: lengths and characters of the fields taken from attributes, numbers' ranges,
 * the years of the times, nesting depth and well-formed text. It only ever says yes when the
 * schema would: anything it is unsure of goes to the schema, which gives the answer and the
 * reason, exactly as for a native span.
 */

const kinds = new Set<string>(spanKinds);
const statuses = new Set(['ok', 'error', 'unset']);
const roles = new Set(['system', 'user', 'assistant', 'tool']);
/** The shape unixNanosToIso gives; years 1970 to 2099, as the schema's isoTime accepts. */
const bridgeTime = /^(19[7-9]\d|20\d\d)-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** Ids the bridge makes are lowercase hex (normalize.ts toHexId): a subset of what idSchema allows. */
const hexId = /^[0-9a-f]{1,128}$/;

const text = (v: unknown): v is string => typeof v === 'string' && v.isWellFormed();
const optionalText = (v: unknown) => v === undefined || text(v);
const label = (v: unknown, max: number) => v === undefined || (text(v) && v.length >= 1 && v.length <= max);
/** Prompt names and versions are rare: their schemas (which refuse control characters) decide. */
const promptName = spanSchema.shape.promptName;
const promptVersion = spanSchema.shape.promptVersion;
const count = (v: unknown) => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= limits.maxTokens);
const range = (v: unknown, max: number) => v === undefined || (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max);
const id = (v: unknown) => typeof v === 'string' && hexId.test(v);

const isPlainRecord = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * A JSON value within maxJsonDepth levels, of plain objects and lists only, every key and
 * string well formed. No recursion: an explicit stack, as json-bounds.ts walks.
 */
function plainJson(value: unknown): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const current = values.pop();
    const depth = depths.pop()!;
    if (typeof current === 'string') {
      if (!current.isWellFormed()) return false;
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > maxJsonDepth) return false;
    if (Array.isArray(current)) {
      for (const item of current) {
        values.push(item);
        depths.push(depth + 1);
      }
      continue;
    }
    if (!isPlainRecord(current)) return false;
    for (const key in current) {
      if (!key.isWellFormed()) return false;
      values.push(current[key]);
      depths.push(depth + 1);
    }
  }
  return true;
}

const jsonObject = (v: unknown) => isPlainRecord(v) && plainJson(v);
const optionalJsonObject = (v: unknown) => v === undefined || jsonObject(v);

function toolCalls(list: unknown): boolean {
  if (list === undefined) return true;
  if (!Array.isArray(list)) return false;
  for (const call of list as Record<string, unknown>[]) {
    if (!isPlainRecord(call) || !text(call.id) || !text(call.name) || !jsonObject(call.arguments)) return false;
    if (call.result !== undefined && !plainJson(call.result)) return false;
  }
  return true;
}

function io(value: SpanIO | undefined): boolean {
  if (value === undefined) return true;
  if (!isPlainRecord(value)) return false;
  if (value.messages !== undefined) {
    if (!Array.isArray(value.messages)) return false;
    for (const m of value.messages) {
      if (
        !isPlainRecord(m) ||
        !roles.has(m.role) ||
        !text(m.content) ||
        !optionalText(m.name) ||
        !optionalText(m.toolCallId) ||
        !toolCalls(m.toolCalls)
      )
        return false;
    }
  }
  if (!toolCalls(value.toolCalls)) return false;
  if (value.documents !== undefined) {
    if (!Array.isArray(value.documents)) return false;
    for (const d of value.documents) {
      if (
        !isPlainRecord(d) ||
        !text(d.content) ||
        !optionalJsonObject(d.metadata) ||
        !(d.score === undefined || (typeof d.score === 'number' && Number.isFinite(d.score)))
      )
        return false;
    }
  }
  return optionalText(value.text) && (value.raw === undefined || plainJson(value.raw));
}

/** Whether the span schema certainly accepts this span, as it is (no repair, nothing stripped). */
export function plainlyValid(span: Span): boolean {
  if (!id(span.spanId) || (span.parentSpanId !== undefined && (!id(span.parentSpanId) || span.parentSpanId === span.spanId))) return false;
  if (!label(span.name, limits.nameLength) || !kinds.has(span.kind) || !statuses.has(span.status)) return false;
  if (!bridgeTime.test(span.startTime) || !bridgeTime.test(span.endTime) || span.endTime < span.startTime) return false;
  if (!range(span.durationMs, limits.maxDurationMs) || !range(span.ttftMs, limits.maxDurationMs) || !range(span.costUsd, limits.maxCostUsd))
    return false;
  if (!count(span.inputTokens) || !count(span.outputTokens) || !count(span.totalTokens)) return false;
  if (!count(span.cacheReadTokens) || !count(span.cacheWriteTokens) || !count(span.reasoningTokens)) return false;
  if (!label(span.model, limits.modelLength) || !label(span.provider, limits.modelLength)) return false;
  if (!(span.promptName === undefined || (text(span.promptName) && promptName.safeParse(span.promptName).success))) return false;
  if (!(span.promptVersion === undefined || (text(span.promptVersion) && promptVersion.safeParse(span.promptVersion).success)))
    return false;
  if (span.statusMessage !== undefined && !(text(span.statusMessage) && span.statusMessage.length <= limits.statusMessageLength))
    return false;
  if (span.droppedEvents !== undefined && !(Number.isSafeInteger(span.droppedEvents) && span.droppedEvents >= 0)) return false;
  if (!io(span.input) || !io(span.output) || !optionalJsonObject(span.attributes) || !optionalJsonObject(span.metadata)) return false;
  if (span.events !== undefined) {
    if (!Array.isArray(span.events) || span.events.length > limits.eventsPerSpan) return false;
    for (const e of span.events) {
      if (!isPlainRecord(e) || !label(e.name, limits.nameLength) || !bridgeTime.test(e.timestamp) || !optionalJsonObject(e.attributes))
        return false;
    }
  }
  return true;
}

const traceFieldSchemas = {
  name: traceSchema.shape.name,
  sessionId: traceSchema.shape.sessionId,
  environment: traceSchema.shape.environment,
  service: traceSchema.shape.service,
  userId: traceSchema.shape.userId,
} as const;

const issueReason = (issues: { path: PropertyKey[]; message: string }[]) => {
  const first = issues[0]!;
  return `${first.path.map(String).join('.') || 'span'}: ${first.message}`;
};

/**
 * Validates the normalized traces once, span by span, with the native schemas. A span the
 * native schema refuses is turned away with its reason; a trace field it refuses (a session
 * or environment label the native schema cannot hold) is left out, as it stays readable in the
 * span attributes and resource. Text with lone surrogates (which no store can hold) is
 * repaired to U+FFFD first, as the native ingest does. Traces longer than the per-payload span
 * limit are stored in parts (a trace may arrive over many calls).
 */
export function validateTraces(traces: NativeTrace[], rejections: SpanRejection[]): Trace[] {
  const valid: Trace[] = [];
  for (const trace of traces) {
    const fields: Partial<Trace> = {};
    for (const [field, schema] of Object.entries(traceFieldSchemas) as [
      keyof typeof traceFieldSchemas,
      (typeof traceFieldSchemas)[keyof typeof traceFieldSchemas],
    ][]) {
      const value = trace[field];
      if (value === undefined) continue;
      const parsed = schema.safeParse(repairLoneSurrogates(field === 'name' ? String(value).slice(0, limits.nameLength) : value));
      if (parsed.success && parsed.data !== undefined) fields[field] = parsed.data;
    }
    if (trace.tags) {
      const tags = trace.tags
        .map((t) => repairLoneSurrogates(t))
        .filter((t) => tagSchema.safeParse(t).success)
        .slice(0, limits.tagsPerTrace);
      if (tags.length > 0) fields.tags = tags;
    }
    const spans: Span[] = [];
    for (const span of trace.spans) {
      if (plainlyValid(span)) {
        spans.push(span);
        continue;
      }
      const parsed = spanSchema.safeParse(repairLoneSurrogates(span));
      if (parsed.success) spans.push(parsed.data);
      else rejections.push({ traceId: trace.traceId, spanId: span.spanId, reason: issueReason(parsed.error.issues) });
    }
    for (let i = 0; i < spans.length; i += limits.spansPerTrace) {
      valid.push({ traceId: trace.traceId, source: trace.source, ...fields, spans: spans.slice(i, i + limits.spansPerTrace) });
    }
  }
  return valid;
}
