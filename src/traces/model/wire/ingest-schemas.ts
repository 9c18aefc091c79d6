import { z } from 'zod';
import { labelSchema, limits, nameSchema, serviceSchema, sessionIdSchema, tagSchema, userIdSchema, newIdSchema } from './field-schemas.js';
import { spanSchema } from './span-schemas.js';

/** Wire shapes of trace ingestion: one trace as sent, the request bodies and the answer. */

export const traceSchema = z
  .object({
    traceId: newIdSchema,
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
