import type { z } from 'zod';
import type { documentSchema, Span, spanMessageSchema, toolCallSchema, Trace } from '../../../model/schemas.js';
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

/** The resource and the instrumentation scope of a request's spans or log records. */
export interface PlainResource {
  attributes?: PlainKeyValue[];
  droppedAttributesCount?: number;
}
export interface PlainScope {
  name?: string;
  version?: string;
  attributes?: PlainKeyValue[];
}

export interface PlainExportRequest {
  resourceSpans?: {
    resource?: PlainResource;
    scopeSpans?: {
      scope?: PlainScope;
      spans?: PlainSpan[];
      schemaUrl?: string;
    }[];
    schemaUrl?: string;
  }[];
}

export interface PlainLogRecord {
  timeUnixNano?: PlainInt64;
  observedTimeUnixNano?: PlainInt64;
  severityNumber?: number;
  severityText?: string;
  body?: PlainAnyValue;
  attributes?: PlainKeyValue[];
  droppedAttributesCount?: number;
  flags?: number;
  traceId?: PlainId;
  spanId?: PlainId;
  eventName?: string;
}

export interface PlainLogsRequest {
  resourceLogs?: {
    resource?: PlainResource;
    scopeLogs?: {
      scope?: PlainScope;
      logRecords?: PlainLogRecord[];
      schemaUrl?: string;
    }[];
    schemaUrl?: string;
  }[];
}

/** OTel span kinds by enum number, kept in span metadata (they are not Loupe kinds). */
export const otelSpanKinds = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;

// The native shapes are the ingest schemas' own (src/traces/model/schemas.ts): one schema per wire
// shape, so the bridge builds exactly what POST /api/traces validates.
export { spanKinds, type SpanKind, type SpanIO } from '../../../model/schemas.js';
export type SpanMessage = z.infer<typeof spanMessageSchema>;
export type SpanToolCall = z.infer<typeof toolCallSchema>;
export type SpanDocument = z.infer<typeof documentSchema>;
/** The native span and trace of SPEC.md, as the bridge produces them. */
export type NativeSpan = Span;
export type NativeTrace = Trace;
