import { z } from 'zod';
import { isoTimeSchema } from '../contract/iso-time.js';
import { SPAN_KINDS } from '../contract/index.js';
import { boundedJson } from '../http/json-bounds.js';
import { paginationMeta } from '../http/pagination.js';
import { costSourceSchema, pricingSchema } from './cost/schemas.js';

/**
 * Wire shapes of traces and spans, as SPEC.md's tables give them, with the limits the
 * specification leaves open (documented in the README, section Traces).
 */

/** The contract's list (src/contract/span-kinds.ts), shared with the client. */
export const spanKinds = SPAN_KINDS;
export const spanKindSchema = z.enum(spanKinds);
export type SpanKind = z.infer<typeof spanKindSchema>;

export const spanStatusSchema = z.enum(['ok', 'error', 'unset']);
export const traceStatusSchema = z.enum(['running', 'completed', 'error']);

export const limits = {
  idLength: 128,
  nameLength: 1000,
  sessionIdLength: 256,
  userIdLength: 256,
  serviceLength: 256,
  promptNameLength: 256,
  tagsPerTrace: 50,
  tagLength: 100,
  labelLength: 64,
  modelLength: 256,
  statusMessageLength: 10_000,
  spansPerTrace: 10_000,
  eventsPerSpan: 1000,
  issuesPerTrace: 20,
  batchTraces: 100,
  /** Tokens of one span: far above any model's context, far below what sums can overflow. */
  maxTokens: 1_000_000_000,
  /** Cost of one span in USD. */
  maxCostUsd: 1_000_000,
  /** Duration of one span: the whole range of accepted times (1970 to 2100) in milliseconds. */
  maxDurationMs: 4_102_444_800_000,
} as const;

/** Trace and span ids: what OpenTelemetry, UUIDs and most SDKs produce, nothing that needs escaping. */
export const idSchema = z
  .string()
  .min(1)
  .max(limits.idLength)
  .regex(/^[A-Za-z0-9._:-]+$/, 'must be 1-128 characters of A-Z a-z 0-9 . _ : -');
/** Source and environment: short labels used for grouping and filters. */
const labelSchema = z
  .string()
  .min(1)
  .max(limits.labelLength)
  .regex(/^[A-Za-z0-9._:/-]+$/, 'must be 1-64 characters of A-Z a-z 0-9 . _ : / -');
// Control characters are exactly what this pattern is about.
// eslint-disable-next-line no-control-regex
const noControl = /^[^\u0000-\u001f\u007f]*$/;
export const sessionIdSchema = z.string().min(1).max(limits.sessionIdLength).regex(noControl, 'must not contain control characters');
const nameSchema = z.string().min(1).max(limits.nameLength);
export const userIdSchema = z.string().min(1).max(limits.userIdLength).regex(noControl, 'must not contain control characters');
export const serviceSchema = z.string().min(1).max(limits.serviceLength).regex(noControl, 'must not contain control characters');
export const tagSchema = z.string().min(1).max(limits.tagLength).regex(noControl, 'must not contain control characters');
/** Years the store's DateTime64 and retention TTL can hold without clamping (contract/iso-time.ts). */
const isoTime = isoTimeSchema;
const tokens = z.number().int().min(0).max(limits.maxTokens);
const costUsd = z.number().min(0).max(limits.maxCostUsd);
const durationMs = z.number().min(0).max(limits.maxDurationMs);
/**
 * The span payload shapes, built twice: bounded for what is accepted (free-form JSON nested
 * at most maxJsonDepth levels), plain for what is returned, so rows stored before a bound
 * existed still read.
 */
function payloadSchemas(json: <T extends z.ZodType>(schema: T) => T) {
  const jsonObject = json(z.record(z.string(), z.unknown()));
  const toolCall = z.object({ id: z.string(), name: z.string(), arguments: jsonObject, result: json(z.unknown()).optional() });
  /** A message in conversation order; an assistant turn that called tools carries its `toolCalls`. */
  const message = z.object({
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: z.string(),
    name: z.string().optional(),
    toolCallId: z.string().optional(),
    toolCalls: z.array(toolCall).optional(),
  });
  const document = z.object({ content: z.string(), metadata: jsonObject.optional(), score: z.number().optional() });
  const io = z.object({
    messages: z.array(message).optional(),
    toolCalls: z.array(toolCall).optional(),
    documents: z.array(document).optional(),
    text: z.string().optional(),
    raw: json(z.unknown()).optional(),
  });
  return { jsonObject, message, toolCall, document, io };
}
const accepted = payloadSchemas(<T extends z.ZodType>(schema: T): T => boundedJson(schema));
const returned = payloadSchemas((schema) => schema);

export const spanMessageSchema = accepted.message;
export const toolCallSchema = accepted.toolCall;
export const documentSchema = accepted.document;
export const spanIOSchema = accepted.io;
export type SpanIO = z.infer<typeof spanIOSchema>;

export const spanEventSchema = z.object({
  name: z.string().min(1).max(limits.nameLength),
  timestamp: isoTime,
  attributes: accepted.jsonObject.optional(),
});

/** Fields a span may carry; unknown fields are dropped (the README lists the kept ones). */
const spanFields = {
  spanId: idSchema,
  parentSpanId: idSchema.optional(),
  name: nameSchema,
  kind: spanKindSchema,
  input: spanIOSchema.optional(),
  output: spanIOSchema.optional(),
  startTime: isoTime,
  endTime: isoTime,
  durationMs,
  model: z.string().min(1).max(limits.modelLength).optional(),
  provider: z.string().min(1).max(limits.modelLength).optional(),
  inputTokens: tokens.optional(),
  outputTokens: tokens.optional(),
  totalTokens: tokens.optional(),
  cacheReadTokens: tokens.optional(),
  cacheWriteTokens: tokens.optional(),
  reasoningTokens: tokens.optional(),
  costUsd: costUsd.optional(),
  ttftMs: durationMs.optional(),
  status: spanStatusSchema,
  statusMessage: z.string().max(limits.statusMessageLength).optional(),
  attributes: accepted.jsonObject.optional(),
  events: z.array(spanEventSchema).max(limits.eventsPerSpan).optional(),
  /** Events not stored: past the per-span limit (the first ones are kept) or dropped by the sender. */
  droppedEvents: z.number().int().nonnegative().optional(),
  metadata: accepted.jsonObject.optional(),
  promptName: z.string().min(1).max(limits.promptNameLength).regex(noControl, 'must not contain control characters').optional(),
  promptVersion: z.string().min(1).max(limits.labelLength).regex(noControl, 'must not contain control characters').optional(),
};

export const spanSchema = z.object(spanFields).superRefine((span, ctx) => {
  if (isBefore(span.endTime, span.startTime)) {
    ctx.addIssue({ code: 'custom', path: ['endTime'], message: 'must not be before startTime' });
  }
  if (span.parentSpanId !== undefined && span.parentSpanId === span.spanId) {
    ctx.addIssue({ code: 'custom', path: ['parentSpanId'], message: 'must not name the span itself' });
  }
});
export type Span = z.infer<typeof spanSchema>;

/** Date.parse drops sub-millisecond digits, so equal milliseconds compare those digits. */
export function isBefore(a: string, b: string): boolean {
  const ms = Date.parse(a) - Date.parse(b);
  return ms < 0 || (ms === 0 && subMillis(a) < subMillis(b));
}
function subMillis(iso: string): number {
  const fraction = /\.(\d+)/.exec(iso)?.[1] ?? '';
  return Number(fraction.padEnd(9, '0').slice(3, 9));
}

export const traceSchema = z
  .object({
    traceId: idSchema,
    name: nameSchema.optional(),
    sessionId: sessionIdSchema.optional(),
    source: labelSchema,
    environment: labelSchema.optional(),
    service: serviceSchema.optional(),
    userId: userIdSchema.optional(),
    tags: z.array(tagSchema).max(limits.tagsPerTrace).optional(),
    spans: z.array(spanSchema).min(1).max(limits.spansPerTrace),
  })
  .superRefine((trace, ctx) => {
    // Two spans with one id in one trace is ambiguous: the trace is rejected, never half-stored.
    const seen = new Map<string, number>();
    trace.spans.forEach((span, index) => {
      const first = seen.get(span.spanId);
      if (first === undefined) seen.set(span.spanId, index);
      else ctx.addIssue({ code: 'custom', path: ['spans', index, 'spanId'], message: `duplicates the spanId of spans.${first}` });
    });
  });
export type Trace = z.infer<typeof traceSchema>;

/** The body is checked only for its outer shape here; each trace is validated on its own. */
export const ingestBodySchema = z.object({ traces: z.array(z.unknown()) });
export const batchIngestBodySchema = z.object({
  traces: z.array(z.unknown()).max(limits.batchTraces, `at most ${limits.batchTraces} traces per batch request`),
});

export const ingestErrorSchema = z.object({
  index: z.number().int(),
  traceId: z.string().nullable(),
  path: z.string(),
  message: z.string(),
});
export const ingestResultSchema = z.object({
  accepted: z.number().int(),
  rejected: z.number().int(),
  errors: z.array(ingestErrorSchema),
});
export type IngestResult = z.infer<typeof ingestResultSchema>;

/**
 * A span as returned: exactly the fields it was sent with, and how its cost was found
 * (`costSource`, `pricing`: output only; a client that sends them has them ignored, like any
 * field the span table does not name). Numbers are not bounded here: rows stored before the
 * bounds existed must still read.
 */
export const storedSpanSchema = z.object({
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: spanKindSchema,
  input: returned.io.optional(),
  output: returned.io.optional(),
  startTime: z.string(),
  endTime: z.string(),
  durationMs: z.number(),
  model: z.string().optional(),
  provider: z.string().optional(),
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  totalTokens: z.number().optional(),
  cacheReadTokens: z.number().optional(),
  cacheWriteTokens: z.number().optional(),
  reasoningTokens: z.number().optional(),
  costUsd: z.number().optional(),
  costSource: costSourceSchema.optional(),
  pricing: pricingSchema.optional(),
  ttftMs: z.number().optional(),
  status: spanStatusSchema,
  statusMessage: z.string().optional(),
  attributes: returned.jsonObject.optional(),
  events: z.array(z.object({ name: z.string(), timestamp: z.string(), attributes: returned.jsonObject.optional() })).optional(),
  droppedEvents: z.number().optional(),
  metadata: returned.jsonObject.optional(),
  promptName: z.string().optional(),
  promptVersion: z.string().optional(),
});
export type StoredSpan = z.infer<typeof storedSpanSchema>;

export const traceListItemSchema = z.object({
  traceId: z.string(),
  name: z.string().nullable(),
  sessionId: z.string().nullable(),
  source: z.string(),
  environment: z.string().nullable(),
  service: z.string().nullable(),
  userId: z.string().nullable(),
  tags: z.array(z.string()),
  status: traceStatusSchema,
  traceKind: spanKindSchema.nullable(),
  startTime: z.string(),
  endTime: z.string().nullable(),
  durationMs: z.number().nullable(),
  model: z.string().optional(),
  provider: z.string().optional(),
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  totalTokens: z.number().optional(),
  costUsd: z.number().optional(),
  spanCount: z.number().int(),
  errorCount: z.number().int(),
  spans: z.array(storedSpanSchema).optional(),
});
export type TraceListItem = z.infer<typeof traceListItemSchema>;

export const traceDetailSchema = traceListItemSchema.extend({ spans: z.array(storedSpanSchema) });
export type TraceDetail = z.infer<typeof traceDetailSchema>;

/** Offsets past this answer 400: deep pages are walked with `cursor` (README, "Limits of trace reads"). */
export const maxOffset = 10_000;
export const traceSorts = ['startTime', '-startTime', 'durationMs', '-durationMs', 'costUsd', '-costUsd'] as const;
export type TraceSort = (typeof traceSorts)[number];
/** A query value is text: an empty one is refused rather than read as 0. */
export const queryAmount = z.string().trim().min(1, 'must be a non-negative number').pipe(z.coerce.number<string>().finite().nonnegative());
/** Repeatable: `tag=a&tag=b` (every tag must be on the trace). */
const tagFilter = z.union([tagSchema, z.array(tagSchema).min(1).max(limits.tagsPerTrace)]);
export const pageCursorSchema = z.string().min(1).max(4096);

export const listTracesQuery = z
  .object({
    sessionId: sessionIdSchema.optional(),
    status: traceStatusSchema.optional(),
    source: labelSchema.optional(),
    environment: labelSchema.optional(),
    service: serviceSchema.optional(),
    userId: userIdSchema.optional(),
    tag: tagFilter.optional(),
    name: nameSchema.optional(),
    model: z.string().min(1).max(limits.modelLength).optional(),
    minDurationMs: queryAmount.optional(),
    minCostUsd: queryAmount.optional(),
    startAfter: isoTime.optional(),
    startBefore: isoTime.optional(),
    sort: z.enum(traceSorts).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    offset: z.coerce
      .number()
      .int()
      .min(0)
      .max(maxOffset, `must be at most ${maxOffset}: page further with cursor (meta.pagination.nextCursor)`)
      .default(0),
    cursor: pageCursorSchema.optional(),
    include: z.enum(['spans']).optional(),
  })
  .strict()
  .superRefine((query, ctx) => {
    if (query.cursor !== undefined && query.offset > 0) {
      ctx.addIssue({ code: 'custom', path: ['offset'], message: 'must be 0 (or absent) with cursor' });
    }
  });
export type ListTracesQuery = z.infer<typeof listTracesQuery>;

export const traceParams = z.object({ id: idSchema });

/** The shared list shape (http/pagination.ts), as the prompt list answers it too. */
export const listMetaSchema = paginationMeta;
