import { z } from 'zod';
import { compileModelPattern } from '../model-pattern.js';

/**
 * Wire shapes of cost and prices: the `costSource` and `pricing` a generation span is returned
 * with, the workspace prices of /api/models, and the answers of its lookup, unpriced list and
 * reprice routes.
 */

export const costSources = ['provided', 'computed', 'none'] as const;
export const costSourceSchema = z.enum(costSources);
export type CostSource = z.infer<typeof costSourceSchema>;

const rate = z.number().finite().nonnegative().max(1_000_000, 'must be at most 1,000,000 USD per million tokens');

const pricingRates = {
  /** The id of the provider in the table that priced the span (null: a workspace price for any provider). */
  providerId: z.string().nullable(),
  modelId: z.string(),
  inputPerMillion: z.number(),
  outputPerMillion: z.number(),
  cacheReadPerMillion: z.number().optional(),
  cacheWritePerMillion: z.number().optional(),
};

/** The price a computed cost used: its rates (the tier that applied) and which table it came from. */
export const pricingSchema = z.discriminatedUnion('source', [
  z.object({ ...pricingRates, source: z.literal('builtin'), version: z.string() }),
  z.object({ ...pricingRates, source: z.literal('workspace'), priceId: z.string() }),
]);
export type Pricing = z.infer<typeof pricingSchema>;

export const maxModelPatternLength = 256;

const isoTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone (Z or ±hh:mm)' });

export const createPriceBody = z
  .object({
    model: z.string().min(1).max(maxModelPatternLength),
    matchType: z.enum(['exact', 'regex']),
    provider: z.string().min(1).max(256).optional(),
    inputPerMillion: rate,
    outputPerMillion: rate,
    cacheReadPerMillion: rate.optional(),
    cacheWritePerMillion: rate.optional(),
    validFrom: isoTime.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.matchType !== 'regex') return;
    try {
      compileModelPattern(body.model);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['model'], message: `is not a valid RE2 regular expression (${(error as Error).message})` });
    }
  });
export type CreatePriceBody = z.infer<typeof createPriceBody>;

export const workspacePriceSchema = z.object({
  id: z.string(),
  model: z.string(),
  matchType: z.enum(['exact', 'regex']),
  /** As sent; matched after normalization (provider.ts). */
  provider: z.string().nullable(),
  inputPerMillion: z.number(),
  outputPerMillion: z.number(),
  cacheReadPerMillion: z.number().nullable(),
  cacheWritePerMillion: z.number().nullable(),
  validFrom: z.string().nullable(),
  createdAt: z.string(),
});
export type WorkspacePrice = z.infer<typeof workspacePriceSchema>;

export const priceIdParams = z.object({ id: z.uuid() });

export const priceLookupQuery = z.object({ model: z.string().min(1).max(256), provider: z.string().min(1).max(256).optional() }).strict();

export const priceLookupSchema = z.object({ model: z.string(), provider: z.string().nullable(), pricing: pricingSchema });

export const rangeQuery = z.object({ startAfter: isoTime.optional(), startBefore: isoTime.optional() }).strict();

export const unpricedModelSchema = z.object({
  model: z.string(),
  provider: z.string().nullable(),
  spanCount: z.number().int(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  firstSeen: z.string(),
  lastSeen: z.string(),
});

export const unpricedListSchema = z.object({
  range: z.object({ startAfter: z.string(), startBefore: z.string() }),
  models: z.array(unpricedModelSchema),
});

export const repriceBody = z.object({ startAfter: isoTime, startBefore: isoTime }).strict();

export const repriceResultSchema = z.object({
  /** Spans of the range whose cost is not provided: computed, unpriced, or stored before cost was computed. */
  spansExamined: z.number().int(),
  /** Of those, spans whose cost, source or price changed (a new row version each). */
  spansUpdated: z.number().int(),
  spansPriced: z.number().int(),
  spansUnpriced: z.number().int(),
  tracesUpdated: z.number().int(),
});
export type RepriceResult = z.infer<typeof repriceResultSchema>;
