import type { SpanIO, SpanKind, SpanToolCall } from '../wire/model.js';
import type { ConvertedMessages } from '../values/io-genai.js';
import { asArguments, asNumber, asString, parseMaybeJson } from '../values/io-values.js';
import { toSpanIO } from '../values/io-genai.js';
import { trimVectorsInJson, type Trim } from '../values/trim.js';

/**
 * The row types of the mapping tables (conventions/*.ts, one file per convention) and the row
 * builders they share. mapping.ts composes the tables in their order of precedence and applies
 * them; a row never knows about another convention.
 */

export type Attrs = Record<string, unknown>;

export interface KindRow {
  key: string;
  /** Compared case-insensitively; '*' takes any value that names a native kind. */
  value: string;
  kind: SpanKind;
  when?: (attrs: Attrs) => boolean;
  /** Whether the attribute is wholly expressed by the kind (then it leaves `attributes`). */
  consumed?: boolean;
  /**
   * A wrapper around the generation span (the ai SDK's `ai.generateText` around its
   * `doGenerate`): it repeats its child's model and usage, which stay attributes so the
   * generation figures come from the generation span only.
   */
  noMetrics?: boolean;
}

export type MetricField =
  | 'model'
  | 'provider'
  | 'inputTokens'
  | 'outputTokens'
  | 'totalTokens'
  | 'costUsd'
  | 'cacheReadTokens'
  | 'cacheWriteTokens'
  | 'reasoningTokens'
  | 'ttftMs'
  | 'promptName'
  | 'promptVersion';

export type MetricFields = Partial<Record<Exclude<MetricField, 'model' | 'provider' | 'promptName' | 'promptVersion'>, number>> & {
  model?: string;
  provider?: string;
  promptName?: string;
  promptVersion?: string;
};

/** What a field row may need beyond the attribute: the span's start, for times given as dates. */
export interface FieldContext {
  /** Span start, milliseconds since the epoch (with sub-millisecond digits). */
  startMs: number;
}

export interface FieldRow {
  /** The field the row fills; a row with `read` may fill several (it names the main one). */
  field: MetricField;
  key: string;
  /** Converts the value; without it, strings for text fields and non-negative numbers for the rest. */
  read?: (value: unknown, context: FieldContext) => MetricFields | undefined;
  /** The attribute holds more than the field (a metadata JSON): it stays in `attributes`. */
  keep?: true;
}

/**
 * A convention's way of saying a span failed besides the OTLP status: an attribute with a
 * value (compared case-insensitively), and the attribute holding its message.
 */
export interface StatusRow {
  key: string;
  value: string;
  messageKey?: string;
}

/** A span event that says the span failed when the sender left the status unset, and its message. */
export interface ErrorEventRow {
  name: string;
  messageKey: string;
}

export type TraceField = 'name' | 'environment' | 'sessionId' | 'userId' | 'service' | 'tags';

export interface TraceFieldRow {
  field: TraceField;
  key: string;
  /** Whether the row reads span attributes, resource attributes, or both (the default). */
  from?: 'span' | 'resource';
}

export interface IORow {
  id: string;
  /** The row runs when one of these keys is present (prefixes end with a dot). */
  keys: string[];
  /**
   * `mapped` is what earlier rows produced: a row of raw text (OpenInference input.value) runs
   * only when nothing better was mapped for its side, else its key is consumed as a duplicate.
   */
  read(
    attrs: Attrs,
    mapped: { input: SpanIO; output: SpanIO },
  ): { input?: SpanIO; output?: SpanIO; consumed: string[]; duplicates?: string[]; trims?: Trim[] };
}

/** One tool call from a span's own attributes (gen_ai execute_tool, ai SDK, OpenInference). */
export function toolCallRow(id: string, keys: { name: string; id: string; args: string; result: string }): IORow {
  return {
    id,
    keys: [keys.name],
    read(attrs) {
      const call: SpanToolCall = {
        id: asString(attrs[keys.id]) ?? '',
        name: asString(attrs[keys.name]) ?? '',
        arguments: asArguments(attrs[keys.args]),
      };
      const consumed = [keys.name, keys.id, keys.args].filter((k) => attrs[k] !== undefined);
      const output =
        attrs[keys.result] !== undefined ? { toolCalls: [{ ...call, result: parseMaybeJson(attrs[keys.result]) }] } : undefined;
      if (output) consumed.push(keys.result);
      return { input: { toolCalls: [call] }, ...(output ? { output } : {}), consumed };
    },
  };
}

export const messagesRow = (id: string, side: 'input' | 'output', convert: (v: unknown) => ConvertedMessages): IORow => ({
  id,
  keys: [id],
  read: (attrs) =>
    side === 'input'
      ? { input: toSpanIO(convert(attrs[id]), id), consumed: [id] }
      : { output: toSpanIO(convert(attrs[id]), id), consumed: [id] },
});

const isEmpty = (io: SpanIO) => !io.messages?.length && !io.toolCalls?.length && !io.documents?.length && io.text === undefined;

/**
 * Raw text of one side (OpenInference `input.value`, the request JSON): kept as `text` only
 * when no earlier row mapped that side; otherwise it repeats the mapped messages and is
 * consumed as a duplicate (recorded in metadata.otel.trimmed), so it is not stored twice.
 */
export const textRow = (key: string, side: 'input' | 'output', mimeKey: string, onlyWhenUnmapped = true): IORow => ({
  id: key,
  keys: [key],
  read: (attrs, mapped) => {
    const consumed = [key, ...(attrs[mimeKey] !== undefined ? [mimeKey] : [])];
    if (onlyWhenUnmapped && !isEmpty(mapped[side])) return { consumed, duplicates: [key] };
    // A raw embedding response holds the vectors: they are trimmed here as in attributes.
    const trims: Trim[] = [];
    const text = trimVectorsInJson(asString(attrs[key]) ?? JSON.stringify(attrs[key]), key, trims);
    return { [side]: { text }, consumed, ...(trims.length > 0 ? { trims } : {}) };
  },
});

/** Milliseconds since the epoch of an ISO 8601 time, microseconds kept (Date.parse drops them). */
export function isoToMs(iso: string): number | undefined {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return undefined;
  const fraction = /\.(\d+)/.exec(iso)?.[1] ?? '';
  return ms + Number(`0.${fraction.padEnd(6, '0').slice(3, 6)}`);
}

/**
 * The time of the first token as an ISO time (Langfuse's `completion_start_time`, JSON-encoded
 * with its quotes; Mastra's `mastra.completion_start_time`, plain): ttft from the span start.
 */
export function readCompletionStart(value: unknown, context: FieldContext): MetricFields | undefined {
  let text = value;
  if (typeof value === 'string' && value.startsWith('"')) {
    try {
      text = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  const at = typeof text === 'string' ? isoToMs(text) : undefined;
  if (at === undefined || at < context.startMs) return undefined;
  return { ttftMs: Math.round((at - context.startMs) * 1000) / 1000 };
}

/**
 * A cost that an instrumentation reports as 0 because it had no price for the model (OpenLIT,
 * OpenLLMetry's `gen_ai.usage.cost`) is no cost at all: the row yields nothing, the attribute
 * stays, and Loupe computes the cost from its price table. A positive cost is the sender's.
 */
export function readPricedCost(value: unknown): MetricFields | undefined {
  const n = asNumber(value);
  return n === undefined || n <= 0 ? undefined : { costUsd: n };
}
