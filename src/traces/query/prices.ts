import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import { notFound } from '../../http/wire/errors.js';
import { resolveWindow, type QueryLimits } from '../model/query-limits.js';
import { quoteSpan } from '../cost/pricing.js';
import { repriceRange, selectUnpricedModels } from './reprice.js';
import type { CreatePriceBody, RepriceResult } from '../model/wire/cost-schemas.js';
import { deletePriceRow, insertPrice, selectPrices } from '../tables/prices-table.js';
import type { PriceBook } from '../cost/workspace-prices.js';

/** The rules behind /api/models; handlers call one of these and answer. */

export async function createPrice(sql: Sql, book: PriceBook, workspaceId: string, body: CreatePriceBody) {
  const price = await insertPrice(sql, workspaceId, body);
  book.invalidate(workspaceId);
  return price;
}

export const listPrices = (sql: Sql, workspaceId: string) => selectPrices(sql, workspaceId);

export async function deletePrice(sql: Sql, book: PriceBook, workspaceId: string, id: string) {
  if (!(await deletePriceRow(sql, workspaceId, id))) throw notFound('Price', { id });
  book.invalidate(workspaceId);
  return { id, deleted: true as const };
}

/** The price a generation span of this model and provider starting now would get, and its table. */
export async function lookupPrice(book: PriceBook, workspaceId: string, model: string, provider: string | undefined) {
  const prices = await book.forWorkspace(workspaceId);
  // Usage is irrelevant to which price applies; one token makes a quote.
  const quote = quoteSpan({ kind: 'llm.chat', model, provider, inputTokens: 1, startTime: new Date().toISOString() }, prices);
  if (!quote) throw notFound('Price', { model, provider: provider ?? null });
  return { model, provider: provider ?? null, pricing: quote.pricing };
}

/** The window as the other trace reads take it (default the last 30 days, at most LOUPE_QUERY_MAX_WINDOW_DAYS). */
export async function listUnpriced(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  query: { startAfter?: string | undefined; startBefore?: string | undefined },
  limits: QueryLimits,
) {
  const { from: startAfter, to: startBefore } = resolveWindow(query.startAfter, query.startBefore, limits);
  return {
    range: { startAfter, startBefore },
    models: await selectUnpricedModels(clickhouse, workspaceId, { startAfter, startBefore }, limits),
  };
}

export async function reprice(
  clickhouse: ClickHouseClient,
  book: PriceBook,
  workspaceId: string,
  range: { startAfter: string; startBefore: string },
): Promise<RepriceResult> {
  // Today's prices: what this replica remembers may be a few seconds old.
  book.invalidate(workspaceId);
  return repriceRange(clickhouse, workspaceId, await book.forWorkspace(workspaceId), range);
}
