/**
 * Shapes shared by the OTLP decoders and the mapping. Both encodings decode to the same
 * plain objects (protobufjs `toObject` form): lowerCamelCase fields, int64 as decimal strings
 * (or JSON numbers that fit), enums as numbers, ids as bytes (protobuf) or hex text (JSON).
 */

/** An attribute value once an OTLP AnyValue is unwrapped. */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

export interface PlainAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number | string;
  arrayValue?: { values?: PlainAnyValue[] };
  kvlistValue?: { values?: PlainKeyValue[] };
  bytesValue?: string | Uint8Array;
}

export interface PlainKeyValue {
  key: string;
  value?: PlainAnyValue;
}

export type PlainId = string | Uint8Array;
export type PlainInt64 = string | number;

export interface PlainSpan {
  traceId?: PlainId;
  spanId?: PlainId;
  traceState?: string;
  parentSpanId?: PlainId;
  flags?: number;
  name?: string;
  kind?: number;
  startTimeUnixNano?: PlainInt64;
  endTimeUnixNano?: PlainInt64;
  attributes?: PlainKeyValue[];
  droppedAttributesCount?: number;
  events?: { timeUnixNano?: PlainInt64; name?: string; attributes?: PlainKeyValue[]; droppedAttributesCount?: number }[];
  droppedEventsCount?: number;
  links?: { traceId?: PlainId; spanId?: PlainId; traceState?: string; attributes?: PlainKeyValue[]; flags?: number }[];
  droppedLinksCount?: number;
  status?: { message?: string; code?: number };
}

export interface PlainExportRequest {
  resourceSpans?: {
    resource?: { attributes?: PlainKeyValue[]; droppedAttributesCount?: number };
    scopeSpans?: {
      scope?: { name?: string; version?: string; attributes?: PlainKeyValue[] };
      spans?: PlainSpan[];
      schemaUrl?: string;
    }[];
    schemaUrl?: string;
  }[];
}

/** OTel span kinds by enum number, kept in span metadata (they are not Loupe kinds). */
export const otelSpanKinds = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;

export const spanKinds = [
  'llm.chat', 'llm.completion', 'llm.embedding',
  'chain', 'agent', 'graph', 'node', 'edge', 'workflow', 'middleware',
  'tool', 'retrieval', 'rerank', 'guardrail', 'custom',
] as const;
export type SpanKind = (typeof spanKinds)[number];

export interface SpanMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
  toolCallId?: string;
}
export interface SpanToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  result?: unknown;
}
export interface SpanDocument {
  content: string;
  metadata?: Record<string, unknown>;
  score?: number;
}
export interface SpanIO {
  messages?: SpanMessage[];
  toolCalls?: SpanToolCall[];
  documents?: SpanDocument[];
  text?: string;
  raw?: unknown;
}

/** The native span and trace of SPEC.md, as the bridge produces them. */
export interface NativeSpan {
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: SpanKind;
  input?: SpanIO;
  output?: SpanIO;
  startTime: string;
  endTime: string;
  durationMs: number;
  model?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
  status: 'ok' | 'error' | 'unset';
  statusMessage?: string;
  attributes?: Record<string, unknown>;
  events?: { name: string; timestamp: string; attributes?: Record<string, unknown> }[];
  metadata?: Record<string, unknown>;
}

export interface NativeTrace {
  traceId: string;
  name?: string;
  sessionId?: string;
  source: 'otel';
  environment?: string;
  spans: NativeSpan[];
}
