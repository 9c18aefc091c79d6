import { z } from 'zod';
import { jsonProblem } from '../../../../http/wire/json-bounds.js';
import type { PlainAnyValue, PlainExportRequest, PlainKeyValue, PlainLogsRequest } from './model.js';

/**
 * OTLP/JSON (the protobuf JSON mapping with hex ids): one zod schema for the wire shape.
 * Nested objects ignore unknown fields, as protobuf JSON readers may; the top level is
 * strict, so a body that is some other JSON (a native `{traces}` payload) answers 400.
 */
const int64 = z.union([z.string().regex(/^-?\d+$/, 'must be an integer'), z.number().int()]);
const uint32 = z.number().int().min(0);
const id = z.string();

const anyValue: z.ZodType<PlainAnyValue> = z.lazy(() =>
  z.looseObject({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: int64.optional(),
    doubleValue: z.union([z.number(), z.enum(['NaN', 'Infinity', '-Infinity'])]).optional(),
    arrayValue: z.looseObject({ values: z.array(anyValue).optional() }).optional(),
    kvlistValue: z.looseObject({ values: z.array(keyValue).optional() }).optional(),
    bytesValue: z.string().optional(),
  }),
);
const keyValue: z.ZodType<PlainKeyValue> = z.lazy(() => z.looseObject({ key: z.string(), value: anyValue.optional() }));
const attributes = z.array(keyValue).optional();

const span = z.looseObject({
  traceId: id.optional(),
  spanId: id.optional(),
  traceState: z.string().optional(),
  parentSpanId: id.optional(),
  flags: uint32.optional(),
  name: z.string().optional(),
  kind: z.number().int().optional(),
  startTimeUnixNano: int64.optional(),
  endTimeUnixNano: int64.optional(),
  attributes,
  droppedAttributesCount: uint32.optional(),
  events: z
    .array(
      z.looseObject({ timeUnixNano: int64.optional(), name: z.string().optional(), attributes, droppedAttributesCount: uint32.optional() }),
    )
    .optional(),
  droppedEventsCount: uint32.optional(),
  links: z
    .array(
      z.looseObject({
        traceId: id.optional(),
        spanId: id.optional(),
        traceState: z.string().optional(),
        attributes,
        flags: uint32.optional(),
      }),
    )
    .optional(),
  droppedLinksCount: uint32.optional(),
  status: z.looseObject({ message: z.string().optional(), code: z.number().int().optional() }).optional(),
});

export const otlpJsonRequestSchema = z.strictObject({
  resourceSpans: z.array(
    z.looseObject({
      resource: z.looseObject({ attributes, droppedAttributesCount: uint32.optional() }).optional(),
      scopeSpans: z
        .array(
          z.looseObject({
            scope: z.looseObject({ name: z.string().optional(), version: z.string().optional(), attributes }).optional(),
            spans: z.array(span).optional(),
            schemaUrl: z.string().optional(),
          }),
        )
        .optional(),
      schemaUrl: z.string().optional(),
    }),
  ),
});

const logRecord = z.looseObject({
  timeUnixNano: int64.optional(),
  observedTimeUnixNano: int64.optional(),
  severityNumber: z.number().int().optional(),
  severityText: z.string().optional(),
  body: anyValue.optional(),
  attributes,
  droppedAttributesCount: uint32.optional(),
  flags: uint32.optional(),
  traceId: id.optional(),
  spanId: id.optional(),
  eventName: z.string().optional(),
});

export const otlpJsonLogsRequestSchema = z.strictObject({
  resourceLogs: z.array(
    z.looseObject({
      resource: z.looseObject({ attributes, droppedAttributesCount: uint32.optional() }).optional(),
      scopeLogs: z
        .array(
          z.looseObject({
            scope: z.looseObject({ name: z.string().optional(), version: z.string().optional(), attributes }).optional(),
            logRecords: z.array(logRecord).optional(),
            schemaUrl: z.string().optional(),
          }),
        )
        .optional(),
      schemaUrl: z.string().optional(),
    }),
  ),
});

// Integer literals of the int64 fields, at a key position (after `{` or `,`). An unescaped
// quote cannot occur inside a JSON string, so this never matches string content.
const int64Literal =
  /([{,]\s*"(?:startTimeUnixNano|endTimeUnixNano|timeUnixNano|observedTimeUnixNano|intValue)"\s*:\s*)(-?\d{16,})(?=\s*[,}])/g;

/**
 * Parses OTLP/JSON text. Unix nanoseconds sent as JSON numbers exceed 2^53, so they are
 * turned into strings before JSON.parse would round them.
 */
export function parseOtlpJson(text: string): unknown {
  return JSON.parse(text.replace(int64Literal, '$1"$2"'));
}

/** Levels an OTLP/JSON body may nest: the request's own 8, then attribute values (4 per level). */
export const maxOtlpJsonDepth = 136;

export type OtlpJsonIssue = { path: string; message: string };

type Decoded<T> = { ok: true; request: T } | { ok: false; issues: OtlpJsonIssue[] };

/** An OTLP/JSON export request of one signal: its top-level list's field, its message name, its schema. */
interface JsonExport<T> {
  field: string;
  message: string;
  schema: z.ZodType<T>;
}

function decodeJsonExport<T>(body: unknown, { field, message, schema }: JsonExport<T>): Decoded<T> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !(field in body)) {
    return { ok: false, issues: [{ path: 'body', message: `is not an ${message}: expected {"${field}": [...]}` }] };
  }
  // The schema recurses into nested values: a body nested deeper than any real export is
  // refused with its path before it could overflow the stack.
  const tooDeep = jsonProblem(body, { maxDepth: maxOtlpJsonDepth });
  if (tooDeep) return { ok: false, issues: [{ path: ['body', ...tooDeep.path.map(String)].join('.'), message: tooDeep.message }] };
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, request: parsed.data };
  return {
    ok: false,
    issues: parsed.error.issues.slice(0, 20).map((issue) => ({
      path: ['body', ...issue.path.map(String)].join('.'),
      message: issue.message,
    })),
  };
}

export function decodeJsonRequest(body: unknown): Decoded<PlainExportRequest> {
  return decodeJsonExport(body, { field: 'resourceSpans', message: 'ExportTraceServiceRequest', schema: otlpJsonRequestSchema });
}

export function decodeJsonLogsRequest(body: unknown): Decoded<PlainLogsRequest> {
  return decodeJsonExport(body, { field: 'resourceLogs', message: 'ExportLogsServiceRequest', schema: otlpJsonLogsRequestSchema });
}
