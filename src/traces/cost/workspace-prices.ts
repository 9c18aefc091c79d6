import type { RE2 } from 're2-wasm';
import { compileModelPattern } from '../model/model-pattern.js';
import type { Sql } from '../../stores/postgres.js';
import { normalizeProvider } from './provider.js';
import type { WorkspacePrice } from '../model/wire/cost-schemas.js';
import { selectPrices } from '../tables/prices-table.js';
import type { TokenUsage } from './usage.js';
import type { Quote } from './builtin.js';

/**
 * A workspace's prices, compiled for matching. Regular expressions run on RE2 (re2-wasm: a
 * linear-time engine, no backtracking, so no pattern can stall ingest); they must match the
 * whole model name, case-insensitively, like exact names.
 *
 * Which price applies to a span (model, provider, start time): among the prices whose model
 * matches and whose provider is unset or equal after normalization, the first in this order
 * whose validFrom is unset or not after the span's start: exact before regex, a price for the
 * span's provider before a price for any provider, the latest validFrom, the newest price.
 */

interface Candidate {
  price: WorkspacePrice;
  provider: string | undefined;
  validFrom: number;
  regex: RE2 | undefined;
}

const maxRemembered = 10_000;

export class WorkspacePriceIndex {
  private readonly candidates: Candidate[];
  private readonly ranked = new Map<string, Candidate[]>();

  constructor(readonly prices: WorkspacePrice[]) {
    const rank = (c: Candidate) => [c.regex ? 1 : 0, c.provider === undefined ? 1 : 0, -c.validFrom, -Date.parse(c.price.createdAt)];
    this.candidates = prices
      .map((price) => ({
        price,
        provider: price.provider === null ? undefined : normalizeProvider(price.provider),
        validFrom: price.validFrom === null ? Number.NEGATIVE_INFINITY : Date.parse(price.validFrom),
        regex: price.matchType === 'regex' ? safeCompile(price.model) : undefined,
      }))
      .filter((c) => c.price.matchType === 'exact' || c.regex !== undefined)
      .sort((a, b) => {
        const [x, y] = [rank(a), rank(b)];
        for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
        return 0;
      });
  }

  get empty(): boolean {
    return this.candidates.length === 0;
  }

  /** The price that applies to the model and (normalized) provider at a time (ISO 8601), if any. */
  find(model: string, provider: string | undefined, at: string): WorkspacePrice | undefined {
    if (this.candidates.length === 0) return undefined;
    let time: number | undefined;
    for (const candidate of this.matching(model, provider)) {
      if (candidate.validFrom === Number.NEGATIVE_INFINITY) return candidate.price;
      time ??= Date.parse(at);
      if (candidate.validFrom <= time) return candidate.price;
    }
    return undefined;
  }

  /** The matching candidates in priority order, remembered per model and provider (regexes run once). */
  private matching(model: string, provider: string | undefined): Candidate[] {
    const key = `${provider ?? ''}\u0000${model}`;
    const known = this.ranked.get(key);
    if (known) return known;
    const lower = model.toLowerCase();
    const found = this.candidates.filter(
      (c) =>
        (c.provider === undefined || c.provider === provider) && (c.regex ? c.regex.test(model) : c.price.model.toLowerCase() === lower),
    );
    if (this.ranked.size >= maxRemembered) this.ranked.clear();
    this.ranked.set(key, found);
    return found;
  }
}

function safeCompile(pattern: string): RE2 | undefined {
  try {
    return compileModelPattern(pattern);
  } catch {
    // Validated when created; a pattern the engine now refuses matches nothing.
    return undefined;
  }
}

/** A workspace price's cost: cache reads and writes at their rates (the input rate when unset), reasoning within output. */
export function workspaceQuote(price: WorkspacePrice, usage: TokenUsage): Quote {
  const cacheRead = price.cacheReadPerMillion ?? price.inputPerMillion;
  const cacheWrite = price.cacheWritePerMillion ?? price.inputPerMillion;
  const uncached = usage.input - usage.cacheRead - usage.cacheWrite;
  const costUsd =
    (uncached * price.inputPerMillion +
      usage.cacheRead * cacheRead +
      usage.cacheWrite * cacheWrite +
      usage.output * price.outputPerMillion) /
    1e6;
  return {
    costUsd,
    pricing: {
      providerId: price.provider === null ? null : normalizeProvider(price.provider),
      modelId: price.model,
      inputPerMillion: price.inputPerMillion,
      outputPerMillion: price.outputPerMillion,
      ...(price.cacheReadPerMillion !== null && { cacheReadPerMillion: price.cacheReadPerMillion }),
      ...(price.cacheWritePerMillion !== null && { cacheWritePerMillion: price.cacheWritePerMillion }),
      source: 'workspace',
      priceId: price.id,
    },
  };
}

const noPrices = new WorkspacePriceIndex([]);

/**
 * Each workspace's compiled prices, kept in memory: ingest looks a span's price up without a
 * database read. An entry is read again after `ttlMs` (another replica's change applies within
 * that time) and dropped at once when this process changes the workspace's prices.
 */
export class PriceBook {
  private readonly entries = new Map<string, { index: Promise<WorkspacePriceIndex>; loadedAt: number }>();

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
  ) {}

  forWorkspace(workspaceId: string): Promise<WorkspacePriceIndex> {
    const now = Date.now();
    const entry = this.entries.get(workspaceId);
    if (entry && now - entry.loadedAt < this.ttlMs) return entry.index;
    const index = selectPrices(this.sql, workspaceId).then((prices) => (prices.length === 0 ? noPrices : new WorkspacePriceIndex(prices)));
    // A failed read is not remembered: the next ingest tries again.
    index.catch(() => this.entries.delete(workspaceId));
    this.entries.set(workspaceId, { index, loadedAt: now });
    return index;
  }

  invalidate(workspaceId: string): void {
    this.entries.delete(workspaceId);
  }
}

export const emptyPriceIndex = noPrices;
