import { z } from 'zod';
import { isoTimeSchema } from '../../contract/rules/iso-time.js';

/** Wire shapes of datasets and their items: request bodies, stored shapes, query parameters. */

export const maxItemsPerRequest = 1000;
export const itemStatuses = ['active', 'archived'] as const;

const jsonSchemaField = z
  .record(z.string(), z.unknown())
  .nullable()
  .optional()
  .meta({ description: 'A JSON Schema (draft-07, 2019-09 or 2020-12) items are checked against; null for any JSON' });

const datasetFields = {
  name: z.string().min(1).max(200),
  description: z.string().max(4000).nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  inputSchema: jsonSchemaField,
  expectedOutputSchema: jsonSchemaField,
};

export const createDatasetBody = z.object(datasetFields);
export type CreateDataset = z.infer<typeof createDatasetBody>;

export const updateDatasetBody = z.object(datasetFields).partial().strict();
export type UpdateDataset = z.infer<typeof updateDatasetBody>;

export const datasetSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  inputSchema: z.record(z.string(), z.unknown()).nullable(),
  expectedOutputSchema: z.record(z.string(), z.unknown()).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Dataset = z.infer<typeof datasetSchema>;

export const datasetParams = z.object({ id: z.uuid() });

const idSchema = z.string().min(1).max(128);

/** One item as sent; each is validated on its own and answered per index. */
export const itemInputSchema = z.object({
  id: idSchema.optional().meta({ description: 'Client-supplied for upsert (a re-send is a new version of the item); else generated' }),
  input: z
    .unknown()
    .refine((v) => v !== undefined, 'is required')
    .meta({ description: 'Any JSON (required)' }),
  expectedOutput: z.unknown().optional().meta({ description: 'Any JSON' }),
  metadata: z.record(z.string(), z.unknown()).optional(),
  sourceTraceId: idSchema.nullable().optional(),
  sourceSpanId: idSchema.nullable().optional(),
  status: z.enum(itemStatuses).optional().meta({ description: 'Default `active`' }),
});
export type ItemInput = z.infer<typeof itemInputSchema>;

export const upsertItemsBody = z
  .looseObject({
    items: z.array(z.unknown()).max(maxItemsPerRequest, `at most ${maxItemsPerRequest} items per request`).optional(),
  })
  .meta({ description: 'One item (its fields at the top level), or `items`: an array of them' });

export const upsertItemsResultSchema = z.object({
  accepted: z.number().int(),
  rejected: z.number().int(),
  /** Per item, in the order sent: the stored item's id, or null when rejected. */
  ids: z.array(z.string().nullable()),
  errors: z.array(z.object({ index: z.number().int(), id: z.string().nullable(), path: z.string(), message: z.string() })),
  /** The dataset version the accepted items have from: pass it as `asOf` to read the items as they are now. */
  version: z.string(),
});
export type UpsertItemsResult = z.infer<typeof upsertItemsResultSchema>;

export const itemSchema = z.object({
  id: z.string(),
  datasetId: z.string(),
  input: z.unknown(),
  expectedOutput: z.unknown(),
  metadata: z.record(z.string(), z.unknown()),
  sourceTraceId: z.string().nullable(),
  sourceSpanId: z.string().nullable(),
  status: z.enum(itemStatuses),
  createdAt: z.string(),
  /** When this version of the item was written. */
  validFrom: z.string(),
  /** When a later version replaced it; null for the current one. */
  validTo: z.string().nullable(),
});
export type Item = z.infer<typeof itemSchema>;

export const itemParams = z.object({ id: z.uuid(), itemId: idSchema });

export const listItemsQuery = z.object({
  asOf: isoTimeSchema.optional().meta({ description: 'Answer the items as they were at this time (default now)' }),
  status: z.enum([...itemStatuses, 'all']).default('active'),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(400).optional(),
});
export type ListItemsQuery = z.infer<typeof listItemsQuery>;

export const itemAsOfQuery = z.object({ asOf: listItemsQuery.shape.asOf });

export const itemPageMetaSchema = {
  pagination: z.object({ limit: z.number().int(), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
  /** The time the page answers for. */
  asOf: z.string(),
};

export const itemFromSpanBody = z.object({
  traceId: idSchema,
  spanId: idSchema,
  id: idSchema.optional().meta({ description: "The item's id (an existing one gets a new version); else generated" }),
  expectedOutput: z.unknown().optional().meta({ description: "Default: the span's output" }),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type ItemFromSpan = z.infer<typeof itemFromSpanBody>;
