import type { Attributes, PlainSpan, SpanIO, SpanKind, SpanMessage } from '../wire/model.js';
import { spanKinds } from '../wire/model.js';
import { fromKeyValues } from '../wire/any-value.js';
import { asNumber, asString, parseMaybeJson } from '../values/io-values.js';
import { normalizeProvider } from '../../../cost/provider.js';
import type { Trim } from '../values/trim.js';
import type {
  Attrs,
  ErrorEventRow,
  FieldContext,
  FieldRow,
  IORow,
  KindRow,
  MetricFields,
  StatusRow,
  TraceField,
  TraceFieldRow,
} from '../conventions/table.js';
import { aiSdk } from '../conventions/ai-sdk.js';
import { genAi } from '../conventions/genai.js';
import { langfuse } from '../conventions/langfuse.js';
import { langSmith } from '../conventions/langsmith.js';
import { loupe } from '../conventions/loupe.js';
import { mastra } from '../conventions/mastra.js';
import { openInference } from '../conventions/openinference.js';
import { openLlmetry } from '../conventions/openllmetry.js';

/**
 * How OTel span attributes become native span fields: one table per convention
 * (conventions/*.ts), composed here in the order of precedence docs/api.md gives: Loupe's own
 * extension, then the explicit kinds of Langfuse, OpenInference and LangSmith, then
 * OpenTelemetry GenAI (`gen_ai.operation.name`), then the library heuristics (OpenLLMetry, the
 * ai SDK) and the carriers of frameworks that otherwise speak GenAI (Mastra). Within
 * a composed table the first row that yields a value wins. Keys a row turns into a native
 * field are removed from `attributes`; every other attribute (and each losing alternative)
 * stays.
 */

export type { ErrorEventRow, FieldRow, IORow, KindRow, MetricFields, StatusRow, TraceFieldRow };
export type { MetricField } from '../conventions/table.js';

// ---- kind -------------------------------------------------------------------------------

export const kindRows: KindRow[] = [
  ...loupe.kinds,
  ...langfuse.kinds,
  ...openInference.kinds,
  ...langSmith.kinds,
  ...genAi.kinds,
  ...openLlmetry.kinds,
  ...aiSdk.kinds,
];

const nativeKinds = new Set<string>(spanKinds);

export function mapKind(attrs: Attrs, hits: AttributeHits = hitsOf(attrs)): { kind: SpanKind; consumed: string[]; noMetrics?: boolean } {
  for (const index of hits.kinds) {
    const row = kindRows[index]!;
    const value = attrs[row.key];
    if (typeof value !== 'string') continue;
    if (row.value === '*') {
      if (nativeKinds.has(value)) return { kind: value as SpanKind, consumed: [row.key] };
      continue;
    }
    if (value.toLowerCase() !== row.value.toLowerCase()) continue;
    if (row.when && !row.when(attrs)) continue;
    return { kind: row.kind, consumed: row.consumed ? [row.key] : [], ...(row.noMetrics ? { noMetrics: true } : {}) };
  }
  return { kind: 'custom', consumed: [] };
}

// ---- metrics ----------------------------------------------------------------------------

export const fieldRows: FieldRow[] = [
  ...loupe.fields,
  ...langfuse.fields,
  ...openInference.fields,
  ...langSmith.fields,
  ...genAi.fields,
  ...mastra.fields,
  ...openLlmetry.fields,
  ...aiSdk.fields,
  ...genAi.fallbackFields,
  ...openInference.fallbackFields,
  ...aiSdk.fallbackFields,
  ...langfuse.fallbackFields,
];

const textFields = new Set(['model', 'provider', 'promptName', 'promptVersion']);

/**
 * Names of frameworks that some instrumentations write where the provider goes (LangSmith's
 * `gen_ai.system: "langchain"` when its guess from the model name fails, OpenLIT's framework
 * spans). Such a name is the span's provider only when no other row names one, whatever the
 * rows' order.
 */
export const frameworkNames: ReadonlySet<string> = new Set([
  'langchain',
  'langgraph',
  'llama_index',
  'llamaindex',
  'haystack',
  'crewai',
  'autogen',
  'ag2',
  'dspy',
  'mastra',
  'semantic_kernel',
  'agno',
  'phidata',
  'letta',
]);

/** A plain row's value: text for text fields, a non-negative number for the rest. */
function plainValue(field: string, value: unknown): string | number | undefined {
  if (textFields.has(field)) return asString(value) || undefined;
  const n = asNumber(value);
  return n === undefined || n < 0 ? undefined : n;
}

/**
 * The usage, model, provider, prompt and time-to-first-token fields. Token details are kept
 * as they are sent: cache reads and writes as part of the input count, reasoning as part of
 * the output count (OpenTelemetry's rule, which every mapped convention follows or is
 * converted to). A total that is absent is the sum of input and output.
 */
export function mapMetrics(
  attrs: Attrs,
  context: FieldContext = { startMs: 0 },
  hits: AttributeHits = hitsOf(attrs),
): { fields: MetricFields; consumed: string[] } {
  const fields: MetricFields = {};
  const consumed: string[] = [];
  const out = fields as Record<string, unknown>;
  let framework: { name: string; key: string } | undefined;
  for (const index of hits.fields) {
    const row = fieldRows[index]!;
    const raw = attrs[row.key];
    if (raw === undefined || out[row.field] !== undefined) continue;
    if (!row.read) {
      // Most rows: one attribute, one field, no object in between (this runs for every span).
      const value = plainValue(row.field, raw);
      if (value === undefined) continue;
      if (row.field === 'provider' && frameworkNames.has((value as string).toLowerCase())) {
        framework ??= { name: value as string, key: row.key };
        continue;
      }
      out[row.field] = value;
      consumed.push(row.key);
      continue;
    }
    const values = row.read(raw, context);
    if (!values) continue;
    let used = false;
    for (const field in values) {
      const value = (values as Record<string, unknown>)[field];
      if (value === undefined || out[field] !== undefined) continue;
      out[field] = value;
      used = true;
    }
    // A key read by two rows (a model, then the provider of its family) is listed once.
    if (used && !row.keep && !consumed.includes(row.key)) consumed.push(row.key);
  }
  if (framework && fields.provider === undefined) {
    fields.provider = framework.name;
    consumed.push(framework.key);
  }
  if (fields.provider !== undefined) fields.provider = normalizeProvider(fields.provider);
  if (fields.totalTokens === undefined && (fields.inputTokens !== undefined || fields.outputTokens !== undefined)) {
    fields.totalTokens = (fields.inputTokens ?? 0) + (fields.outputTokens ?? 0);
  }
  return { fields, consumed };
}

// ---- trace fields (span attributes first, then resource attributes) ----------------------

export const traceFieldRows: TraceFieldRow[] = [
  ...langfuse.traceFields,
  ...genAi.traceFields,
  ...openInference.traceFields,
  ...openLlmetry.traceFields,
  ...aiSdk.traceFields,
  ...mastra.traceFields,
  ...langSmith.traceFields,
];

export type TraceFields = Partial<Record<Exclude<TraceField, 'tags'>, string>> & { tags?: string[] };

/** Tags as a list, JSON text of a list, or one tag. */
function asTags(value: unknown): string[] | undefined {
  const parsed = parseMaybeJson(value);
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const tags = list.map(asString).filter((t): t is string => t !== undefined && t !== '');
  return tags.length > 0 ? [...new Set(tags)] : undefined;
}

/**
 * Trace fields of a span, span attributes before resource attributes. `resourceFields`, when
 * given, is `mapTraceFields({}, resource)` worked out once for all the spans of a resource.
 */
export function mapTraceFields(
  span: Attributes,
  resource: Attributes,
  resourceFields?: TraceFields,
  hits: AttributeHits = hitsOf(span),
): TraceFields {
  const out: TraceFields = {};
  const sources = resourceFields
    ? ([[span, 'span', hits]] as const)
    : ([
        [span, 'span', hits],
        [resource, 'resource', hitsOf(resource)],
      ] as const);
  for (const [attrs, from, found] of sources) {
    for (const index of found.traceFields) {
      const row = traceFieldRows[index]!;
      if (out[row.field] !== undefined || (row.from !== undefined && row.from !== from)) continue;
      const raw = attrs[row.key];
      if (raw === undefined) continue;
      if (row.field === 'tags') {
        const tags = asTags(raw);
        if (tags) out.tags = tags;
        continue;
      }
      const value = asString(raw);
      // The SDKs' default when no service was named says nothing about the service.
      if (!value || (row.field === 'service' && value.startsWith('unknown_service'))) continue;
      out[row.field] = value;
    }
  }
  if (resourceFields)
    for (const key in resourceFields) (out as Record<string, unknown>)[key] ??= (resourceFields as Record<string, unknown>)[key];
  return out;
}

// ---- input and output -------------------------------------------------------------------

export const ioRows: IORow[] = [
  ...langfuse.io,
  ...genAi.io,
  ...openInference.io,
  ...openLlmetry.io,
  ...aiSdk.io,
  ...langSmith.io,
  ...openInference.rawIo,
];

/** Whether a row's trigger key (or a key under a trigger prefix ending in a dot) is left. */
function present(attrs: Attrs, key: string, consumed: Set<string>): boolean {
  if (!key.endsWith('.')) return attrs[key] !== undefined && !consumed.has(key);
  for (const k in attrs) if (k.startsWith(key) && !consumed.has(k)) return true;
  return false;
}

export function mergeIO(into: SpanIO, add: SpanIO | undefined) {
  if (!add) return;
  // A side's first list is taken as it was built (each row's lists are its own); later ones are appended to a copy.
  if (add.messages?.length) into.messages = into.messages ? [...into.messages, ...add.messages] : add.messages;
  if (add.toolCalls?.length) into.toolCalls = into.toolCalls ? [...into.toolCalls, ...add.toolCalls] : add.toolCalls;
  if (add.documents?.length) into.documents = into.documents ? [...into.documents, ...add.documents] : add.documents;
  if (add.text !== undefined) {
    if (into.text === undefined) into.text = add.text;
    else into.raw = { ...(into.raw as object), text: add.text };
  }
  if (add.raw !== undefined) into.raw = { ...(into.raw as object), ...(add.raw as object) };
}

export function mapIO(
  attrs: Attrs,
  hits: AttributeHits = hitsOf(attrs),
): { input?: SpanIO; output?: SpanIO; consumed: string[]; duplicates: string[]; trims: Trim[] } {
  const input: SpanIO = {};
  const output: SpanIO = {};
  // A row runs only on keys no earlier row took, so one attribute never lands twice.
  const consumed = new Set<string>();
  const duplicates: string[] = [];
  const trims: Trim[] = [];
  for (const index of hits.io) {
    const row = ioRows[index]!;
    let live = false;
    for (const key of row.keys) if ((live = present(attrs, key, consumed))) break;
    if (!live) continue;
    const result = row.read(attrs, { input, output });
    mergeIO(input, result.input);
    mergeIO(output, result.output);
    for (const key of result.consumed) consumed.add(key);
    if (result.duplicates) duplicates.push(...result.duplicates);
    if (result.trims) trims.push(...result.trims);
  }
  if (input.messages && input.messages.length > 1 && input.messages[0]!.role === 'system')
    input.messages = withoutRepeatedSystem(input.messages);
  const mapped: ReturnType<typeof mapIO> = { consumed: consumed.size > 0 ? [...consumed] : [], duplicates, trims };
  if (!isEmptyObject(input)) mapped.input = input;
  if (!isEmptyObject(output)) mapped.output = output;
  return mapped;
}

/**
 * A system prompt sent twice, as instructions (`gen_ai.system_instructions`) and again as the
 * first input message, is one message: a system message whose text an earlier system message
 * already gave is left out.
 */
function withoutRepeatedSystem(messages: SpanMessage[]): SpanMessage[] {
  const seen = new Set<string>();
  let repeated = false;
  for (const m of messages) {
    if (m.role !== 'system') continue;
    const text = m.content.trim();
    if (seen.has(text) && !m.toolCalls) repeated = true;
    seen.add(text);
  }
  if (!repeated) return messages;
  seen.clear();
  return messages.filter((m) => {
    if (m.role !== 'system' || m.toolCalls) return true;
    const text = m.content.trim();
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
}

function isEmptyObject(object: object): boolean {
  for (const _ in object) return false;
  return true;
}

// ---- status ------------------------------------------------------------------------------

export const statusRows: StatusRow[] = [...langfuse.status];
export const errorEventRows: ErrorEventRow[] = [...genAi.errorEvents];

type PlainEvent = NonNullable<PlainSpan['events']>[number];

/**
 * A span failed when any convention says so: the OTLP status ERROR, a status row's attribute
 * (Langfuse's level ERROR, whatever the OTLP status), or an error event (`exception`) on a span
 * whose status was left unset. An explicit OK with an exception event stays OK (the library
 * handled it). The message: the OTLP status message, else the status row's message, else the
 * event's.
 */
export function mapStatus(
  attrs: Attrs,
  sent: { code?: number; message?: string } | undefined,
  events: readonly PlainEvent[],
): { status: 'unset' | 'ok' | 'error'; message?: string } {
  const code = sent?.code ?? 0;
  let status: 'unset' | 'ok' | 'error' = code === 2 ? 'error' : code === 1 ? 'ok' : 'unset';
  let message = sent?.message || undefined;
  for (const row of statusRows) {
    const value = attrs[row.key];
    if (typeof value !== 'string' || value.toUpperCase() !== row.value.toUpperCase()) continue;
    status = 'error';
    const text = row.messageKey ? asString(attrs[row.messageKey]) : undefined;
    if (!message && text) message = text;
  }
  if (status === 'ok' || (status === 'error' && message) || events.length === 0) return message ? { status, message } : { status };
  for (const row of errorEventRows) {
    const event = events.find((e) => e.name === row.name);
    if (!event) continue;
    status = 'error';
    if (!message) message = asString(fromKeyValues(event.attributes)[row.messageKey]) || undefined;
    break;
  }
  return message ? { status, message } : { status };
}

// ---- rows by attribute key --------------------------------------------------------------

/**
 * The rows of each table that a span's attributes can set off, in table order. Spans carry a
 * handful of the keys the tables name, so the rows are found from the span's own keys, in one
 * pass over them, rather than by looking up every row's key in every span.
 */
export interface AttributeHits {
  kinds: number[];
  fields: number[];
  traceFields: number[];
  io: number[];
}

type Table = keyof AttributeHits;
const rowsByKey = new Map<string, Partial<Record<Table, number[]>>>();
/** IO rows triggered by a key prefix, by the prefix's first segment (`llm` of `llm.input_messages.`). */
const ioPrefixes = new Map<string, { prefix: string; index: number }[]>();
const byKey = (table: Table, key: string, index: number) => {
  let entry = rowsByKey.get(key);
  if (!entry) rowsByKey.set(key, (entry = {}));
  (entry[table] ??= []).push(index);
};
kindRows.forEach((row, i) => byKey('kinds', row.key, i));
fieldRows.forEach((row, i) => byKey('fields', row.key, i));
traceFieldRows.forEach((row, i) => byKey('traceFields', row.key, i));
ioRows.forEach((row, i) => {
  for (const key of row.keys) {
    if (!key.endsWith('.')) byKey('io', key, i);
    else {
      const segment = key.slice(0, key.indexOf('.'));
      let list = ioPrefixes.get(segment);
      if (!list) ioPrefixes.set(segment, (list = []));
      list.push({ prefix: key, index: i });
    }
  }
});

/**
 * Adds a row index to a list kept in table order, once. A span's keys trigger a handful of
 * rows, so placing each on arrival costs less than sorting the lists afterwards.
 */
function insertRow(list: number[], index: number) {
  let i = list.length;
  while (i > 0 && list[i - 1]! > index) i--;
  if (i > 0 && list[i - 1] === index) return; // a row with several keys present is run once
  if (i === list.length) list.push(index);
  else list.splice(i, 0, index);
}

/**
 * The rows one attribute key triggers, its IO rows by prefix included. Keys repeat from span to
 * span, so each is looked up once: at most `keyRowsLimit` are kept (then the memo starts over),
 * so keys a client invents cannot grow it without bound.
 */
const keyRowsMemo = new Map<string, Partial<Record<Table, number[]>> | null>();
const keyRowsLimit = 4096;
function keyRows(key: string): Partial<Record<Table, number[]>> | null {
  let rows = keyRowsMemo.get(key);
  if (rows !== undefined) return rows;
  const entry = rowsByKey.get(key);
  const dot = key.indexOf('.');
  const prefixed = dot > 0 ? ioPrefixes.get(key.slice(0, dot))?.filter(({ prefix }) => key.startsWith(prefix)) : undefined;
  rows = entry ?? null;
  if (prefixed && prefixed.length > 0) rows = { ...entry, io: [...(entry?.io ?? []), ...prefixed.map(({ index }) => index)] };
  if (keyRowsMemo.size >= keyRowsLimit) keyRowsMemo.clear();
  keyRowsMemo.set(key, rows);
  return rows;
}

export function hitsOf(attrs: Attrs): AttributeHits {
  const hits: AttributeHits = { kinds: [], fields: [], traceFields: [], io: [] };
  for (const key in attrs) {
    const entry = keyRows(key);
    if (!entry) continue;
    if (entry.kinds) for (const i of entry.kinds) insertRow(hits.kinds, i);
    if (entry.fields) for (const i of entry.fields) insertRow(hits.fields, i);
    if (entry.traceFields) for (const i of entry.traceFields) insertRow(hits.traceFields, i);
    if (entry.io) for (const i of entry.io) insertRow(hits.io, i);
  }
  return hits;
}
