import { z } from 'zod';
import { isoTimeSchema } from '../../contract/rules/iso-time.js';
import { maxItemsPerRequest } from './schemas.js';

/** Wire shapes of runs (experiments) and their items. */

const runFields = {
  name: z.string().min(1).max(200),
  description: z.string().max(4000).nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).optional().meta({ description: 'What was run: the prompt version, the model, …' }),
};

export const createRunBody = z.object({
  ...runFields,
  datasetVersion: isoTimeSchema.optional().meta({ description: "The time of the dataset's items the run uses (default now)" }),
});
export type CreateRun = z.infer<typeof createRunBody>;

export const updateRunBody = z.object({ description: runFields.description, metadata: runFields.metadata }).strict();
export type UpdateRun = z.infer<typeof updateRunBody>;

export const runSchema = z.object({
  id: z.string(),
  datasetId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  datasetVersion: z.string(),
  itemCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Run = z.infer<typeof runSchema>;

export const runParams = z.object({ id: z.uuid(), runId: z.uuid() });

const idSchema = z.string().min(1).max(128);

export const runItemInputSchema = z.object({
  datasetItemId: idSchema,
  traceId: idSchema.meta({ description: 'The trace that processed the item: its scores, cost and latency are the run item’s' }),
  spanId: idSchema.nullable().optional(),
  output: z.unknown().optional(),
  error: z.string().max(20000).nullable().optional(),
});
export type RunItemInput = z.infer<typeof runItemInputSchema>;

export const upsertRunItemsBody = z
  .looseObject({
    items: z.array(z.unknown()).max(maxItemsPerRequest, `at most ${maxItemsPerRequest} items per request`).optional(),
  })
  .meta({
    description: 'One run item (its fields at the top level), or `items`: an array of them; one per dataset item (a re-send replaces it)',
  });

export const upsertRunItemsResultSchema = z.object({
  accepted: z.number().int(),
  rejected: z.number().int(),
  errors: z.array(z.object({ index: z.number().int(), path: z.string(), message: z.string() })),
});
export type UpsertRunItemsResult = z.infer<typeof upsertRunItemsResultSchema>;

export const runItemSchema = z.object({
  datasetItemId: z.string(),
  traceId: z.string(),
  spanId: z.string().nullable(),
  output: z.unknown(),
  error: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type RunItem = z.infer<typeof runItemSchema>;

export const listRunItemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(400).optional(),
});
export type ListRunItemsQuery = z.infer<typeof listRunItemsQuery>;

export const runItemPageMetaSchema = {
  pagination: z.object({ limit: z.number().int(), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
};
