import { builtinQuote, type Quote } from './builtin.js';
import { normalizeProvider } from './provider.js';
import type { CostSource, Pricing } from '../model/wire/cost-schemas.js';
import { tokenUsage, type UsageFields } from './usage.js';
import { emptyPriceIndex, workspaceQuote, type PriceBook, type WorkspacePriceIndex } from './workspace-prices.js';

/**
 * The cost a span is stored with. A sent cost always wins (`provided`). A generation span
 * (`llm.*`) with a model and token counts but no cost is priced (`computed`, with the price
 * used) by the workspace's prices first, then the built-in table; with neither it is `none`
 * (cost null, listed by GET /api/models/unpriced). Other spans without a cost are not priced.
 */
export interface SpanCost {
  costUsd?: number;
  costSource?: CostSource;
  pricing?: Pricing;
}

export interface PricedFields extends UsageFields {
  kind: string;
  model?: string | undefined;
  provider?: string | undefined;
  costUsd?: number | undefined;
  startTime: string;
}

const provided: SpanCost = { costSource: 'provided' };
const unpriced: SpanCost = { costSource: 'none' };
const notPriced: SpanCost = {};

/** The price of a span's usage at its start time: the workspace's price, else the built-in one. */
export function quoteSpan(span: PricedFields, prices: WorkspacePriceIndex): Quote | null | undefined {
  if (span.model === undefined || !span.kind.startsWith('llm.')) return undefined;
  const usage = tokenUsage(span);
  if (usage === null) return undefined;
  const provider = span.provider === undefined ? undefined : normalizedProvider(span.provider);
  const price = prices.find(span.model, provider, span.startTime);
  if (price) return workspaceQuote(price, usage);
  return builtinQuote(provider, span.model, usage, span.startTime);
}

/** normalizeProvider, remembered: a service sees few provider names, and ingest asks per span. */
const normalized = new Map<string, string>();
function normalizedProvider(name: string): string {
  let id = normalized.get(name);
  if (id === undefined) {
    if (normalized.size >= 10_000) normalized.clear();
    id = normalizeProvider(name);
    normalized.set(name, id);
  }
  return id;
}

export function priceSpan(span: PricedFields, prices: WorkspacePriceIndex): SpanCost {
  if (span.costUsd !== undefined) return provided;
  const quote = quoteSpan(span, prices);
  if (quote === undefined) return notPriced;
  return quote === null ? unpriced : { costUsd: quote.costUsd, costSource: 'computed', pricing: quote.pricing };
}

export interface IngestPricing {
  /** False: spans keep the cost they sent (LOUPE_COST_AT_INGEST=false). */
  enabled: boolean;
  book?: PriceBook | undefined;
}

/** The function that prices the workspace's spans at ingest, or undefined when pricing is off. */
export async function spanPricerFor(pricing: IngestPricing, workspaceId: string): Promise<((span: PricedFields) => SpanCost) | undefined> {
  if (!pricing.enabled) return undefined;
  const prices = pricing.book ? await pricing.book.forWorkspace(workspaceId) : emptyPriceIndex;
  return (span) => priceSpan(span, prices);
}
