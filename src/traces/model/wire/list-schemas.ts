import { z } from 'zod';
import { paginationMeta } from '../../../http/wire/pagination.js';
import {
  idSchema,
  isoTime,
  labelSchema,
  limits,
  nameSchema,
  serviceSchema,
  sessionIdSchema,
  spanKindSchema,
  tagSchema,
  traceStatusSchema,
  userIdSchema,
} from './field-schemas.js';
import { storedSpanSchema } from './span-schemas.js';
import { scoreAveragesSchema, scoreOnTargetSchema } from '../../../contract/trace-scores.js';
import { highlightSchema, searchableText, searchFields } from '../search.js';

/** Wire shapes of trace reads: a list item, a trace whole, and the list's query parameters. */

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

/** A list item as GET /api/traces answers it: per score name, the averages of the scores on the trace and its spans (absent without scores). */
export const scoredTraceListItemSchema = traceListItemSchema.extend({
  scores: scoreAveragesSchema.optional(),
  highlight: highlightSchema
    .optional()
    .meta({ description: 'With q: the matched snippet of the first span (in start order) whose texts hold the query' }),
});

/** A trace whole: its own scores (on the trace) beside its spans, each span with its scores. */
export const traceDetailSchema = traceListItemSchema.extend({
  spans: z.array(storedSpanSchema.extend({ scores: z.array(scoreOnTargetSchema).optional() })),
  scores: z.array(scoreOnTargetSchema).optional(),
});
export type TraceDetail = z.infer<typeof traceDetailSchema>;

/** Offsets past this answer 400: deep pages are walked with `cursor` (docs/api.md, "Limits of trace reads"). */
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
    score: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'Traces with a score of this name (with scoreMin, scoreMax or scoreValue)' }),
    scoreMin: z.coerce.number().finite().optional(),
    scoreMax: z.coerce.number().finite().optional(),
    scoreValue: z.string().min(1).max(500).optional().meta({ description: 'A categorical score of this label' }),
    q: z
      .string()
      .max(200)
      .regex(searchableText, 'must hold a letter or digit')
      .optional()
      .meta({ description: 'Traces with a span whose texts hold every word, or "a phrase" as written (case-insensitive)' }),
    searchIn: z
      .string()
      .transform((text, ctx) => {
        const fields = [...new Set(text.split(','))];
        for (const field of fields) {
          if (!(searchFields as readonly string[]).includes(field))
            ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of ${searchFields.join(', ')}` });
        }
        return fields as Array<(typeof searchFields)[number]>;
      })
      .optional()
      .meta({ description: `With q: the span texts to search, comma-separated (${searchFields.join(', ')}); all by default` }),
  })
  .strict()
  .superRefine((query, ctx) => {
    if (query.cursor !== undefined && query.offset > 0) {
      ctx.addIssue({ code: 'custom', path: ['offset'], message: 'must be 0 (or absent) with cursor' });
    }
    if (query.searchIn !== undefined && query.q === undefined) ctx.addIssue({ code: 'custom', path: ['searchIn'], message: 'needs q' });
    for (const key of ['scoreMin', 'scoreMax', 'scoreValue'] as const) {
      if (query[key] !== undefined && query.score === undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: 'needs score (the name)' });
    }
  });
export type ListTracesQuery = z.infer<typeof listTracesQuery>;

export const traceParams = z.object({ id: idSchema });

/** The shared list shape (http/wire/pagination.ts), as the prompt list answers it too. */
export const listMetaSchema = paginationMeta;
