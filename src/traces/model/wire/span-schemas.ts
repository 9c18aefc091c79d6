import { z } from 'zod';
import { boundedJson, jsonObject as jsonObjectSchema } from '../../../http/wire/json-bounds.js';
import { costSourceSchema, pricingSchema } from './cost-schemas.js';
import {
  costUsd,
  durationMs,
  idSchema,
  newIdSchema,
  isoTime,
  limits,
  nameSchema,
  noControl,
  spanKindSchema,
  spanStatusSchema,
  tokens,
} from './field-schemas.js';

/** Wire shapes of one span: as accepted (bounded, validated) and as returned (stored). */

/**
 * The span payload shapes, built twice: bounded for what is accepted (free-form JSON nested
 * at most maxJsonDepth levels), plain for what is returned, so rows stored before a bound
 * existed still read.
 */
function payloadSchemas(json: <T extends z.ZodType>(schema: T) => T) {
  const jsonObject = json(jsonObjectSchema());
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

/** Fields a span may carry; unknown fields are dropped (docs/api.md, section Traces, lists the kept ones). */
const spanFields = {
  spanId: newIdSchema,
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

/**
 * Date.parse drops sub-millisecond digits, so equal milliseconds compare those digits. Two UTC
 * times written alike (the same length, both ending in Z: nearly every span) that are in order
 * as text are in order in time, their fields being of fixed width; only the rest are parsed
 * (a time that is no date-time, whose own check already failed, is never before another).
 */
export function isBefore(a: string, b: string): boolean {
  if (a.length === b.length && a.charCodeAt(a.length - 1) === 90 && b.charCodeAt(b.length - 1) === 90 && a >= b) return false;
  const ms = Date.parse(a) - Date.parse(b);
  return ms < 0 || (ms === 0 && subMillis(a) < subMillis(b));
}
function subMillis(iso: string): number {
  const fraction = /\.(\d+)/.exec(iso)?.[1] ?? '';
  return Number(fraction.padEnd(9, '0').slice(3, 9));
}

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
