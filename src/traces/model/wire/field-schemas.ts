import { z } from 'zod';
import { isoTimeSchema } from '../../../contract/rules/iso-time.js';
import { SPAN_KINDS } from '../../../contract/index.js';

/**
 * The field shapes traces and spans are built from (ids, labels, times, amounts) and the limits
 * the specification leaves open (documented in docs/api.md, section Traces).
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
/** An id a client writes: `.` and `..` are refused, since no URL path can carry them to read it back. */
export const newIdSchema = idSchema.refine((id) => id !== '.' && id !== '..', 'must not be . or .. (a URL path cannot carry them)');
/** Source and environment: short labels used for grouping and filters. */
export const labelSchema = z
  .string()
  .min(1)
  .max(limits.labelLength)
  .regex(/^[A-Za-z0-9._:/-]+$/, 'must be 1-64 characters of A-Z a-z 0-9 . _ : / -');
// Control characters are exactly what this pattern is about.
// eslint-disable-next-line no-control-regex
export const noControl = /^[^\u0000-\u001f\u007f]*$/;
export const sessionIdSchema = z.string().min(1).max(limits.sessionIdLength).regex(noControl, 'must not contain control characters');
export const nameSchema = z.string().min(1).max(limits.nameLength);
export const userIdSchema = z.string().min(1).max(limits.userIdLength).regex(noControl, 'must not contain control characters');
export const serviceSchema = z.string().min(1).max(limits.serviceLength).regex(noControl, 'must not contain control characters');
export const tagSchema = z.string().min(1).max(limits.tagLength).regex(noControl, 'must not contain control characters');
/** Years the store's DateTime64 and retention TTL can hold without clamping. */
export const isoTime = isoTimeSchema;
export const tokens = z.number().int().min(0).max(limits.maxTokens);
export const costUsd = z.number().min(0).max(limits.maxCostUsd);
export const durationMs = z.number().min(0).max(limits.maxDurationMs);
