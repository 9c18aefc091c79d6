import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { calcPrice, type ModelInfo, type ModelPrice, type Provider } from '@pydantic/genai-prices';
import type { Pricing } from '../model/wire/cost-schemas.js';
import type { TokenUsage } from './usage.js';

/**
 * The built-in price table: @pydantic/genai-prices, bundled data, pinned in package.json
 * (docs/api.md, "Cost and prices", says how to update it). Matching a model to the table
 * (`calcPrice`) takes 0.1-0.2 ms, far too slow for every span at ingest, so a (provider, model)
 * pair is matched once and remembered; each span is then priced by `quote` from the matched model's
 * prices, with the library's own arithmetic (the units below, tiers chosen by input tokens, each
 * term price × tokens / per, summed per direction). test/unit/cost-builtin.test.ts compares it with
 * `calcPrice` over every model of the table.
 */

function packageVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@pydantic/genai-prices');
  const manifest = JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/** The version of the installed table, named by every built-in `pricing`. */
export const builtinVersion = packageVersion();

type Tiered = { base: number; tiers: Array<{ start: number; price: number }> };
type Price = number | Tiered;

/** Which token count each price key charges; any other key charges usage a span never reports (0). */
const units: Record<string, { usage: keyof TokenUsage | 'requests'; per: number; direction: 'input' | 'output' | 'other' }> = {
  input_mtok: { usage: 'input', per: 1e6, direction: 'input' },
  cache_read_mtok: { usage: 'cacheRead', per: 1e6, direction: 'input' },
  cache_write_mtok: { usage: 'cacheWrite', per: 1e6, direction: 'input' },
  output_mtok: { usage: 'output', per: 1e6, direction: 'output' },
  output_reasoning_mtok: { usage: 'reasoning', per: 1e6, direction: 'output' },
  requests_kcount: { usage: 'requests', per: 1e3, direction: 'other' },
};

type Unit = (typeof units)[string];
const compiledTerms = new WeakMap<ModelPrice, Array<{ price: Price; unit: Unit }>>();

/** A model price's terms that a span can reach, in the price's key order (the library sums in that order). */
function termsOf(prices: ModelPrice): Array<{ price: Price; unit: Unit }> {
  let terms = compiledTerms.get(prices);
  if (terms === undefined) {
    terms = [];
    for (const [key, price] of Object.entries(prices)) {
      const unit = units[key];
      if (price !== undefined && unit !== undefined) terms.push({ price, unit });
    }
    compiledTerms.set(prices, terms);
  }
  return terms;
}

interface Matched {
  provider: Provider;
  model: ModelInfo;
  /** False when the library rejects the model's price data: no span of it is priced. */
  usable: boolean;
}

const maxRemembered = 10_000;
/** Providers tried, in order, for a model sent without one (docs/api.md, "Cost and prices", lists them). */
export const firstParty = ['openai', 'anthropic', 'google', 'mistral', 'cohere', 'x-ai', 'deepseek'];
const matches = new Map<string, Matched | null>();

function match(providerId: string | undefined, model: string): Matched | null {
  const key = `${providerId ?? ''}\u0000${model}`;
  const known = matches.get(key);
  if (known !== undefined) return known;
  let found: Matched | null = null;
  const probe = { input_tokens: 1000, cache_read_tokens: 100, cache_write_tokens: 100, output_tokens: 100, output_reasoning_tokens: 10 };
  const options = providerId === undefined ? {} : { providerId };
  let result: ReturnType<typeof calcPrice>;
  try {
    result = calcPrice(probe, model, options);
  } catch {
    result = calcPrice({}, model, options);
    if (result) found = { provider: result.provider, model: result.model, usable: false };
  }
  if (result && !found) found = { provider: result.provider, model: result.model, usable: true };
  // `openai/gpt-4o` sent with provider openai: the table knows the model by its last part.
  const slash = model.lastIndexOf('/');
  if (!found && slash > 0 && slash < model.length - 1) found = match(providerId, model.slice(slash + 1));
  // No provider sent, and the table's own guess by model name found none (it knows
  // `text-embedding-3-small` only under openai): the first-party providers, in this order.
  if (!found && providerId === undefined) {
    for (const id of firstParty) if ((found = match(id, model))) break;
  }
  // Model names are free text: the memory is bounded; a full one starts over.
  if (matches.size >= maxRemembered) matches.clear();
  matches.set(key, found);
  return found;
}

/** The model's prices at a time, as the library selects them (start dates, times of day). */
function pricesAt(model: ModelInfo, when: Date | string): ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  // Parsed only here: most models have one price, and parsing costs more than pricing.
  const at = typeof when === 'string' ? new Date(when) : when;
  const seconds = at.getUTCHours() * 3600 + at.getUTCMinutes() * 60 + at.getUTCSeconds() + at.getUTCMilliseconds() / 1000;
  for (let i = model.prices.length - 1; i >= 0; i--) {
    const { constraint, prices } = model.prices[i]!;
    if (constraint === undefined) return prices;
    if (constraint.type === 'start_date') {
      if (at >= new Date(constraint.start_date)) return prices;
    } else {
      const start = timeOfDay(constraint.start_time);
      const end = timeOfDay(constraint.end_time);
      if (end < start ? seconds >= start || seconds < end : seconds >= start && seconds < end) return prices;
    }
  }
  return model.prices[0]!.prices;
}

function timeOfDay(text: string): number {
  const m = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (!m) return 0;
  const offset = m[5] === 'Z' ? 0 : (m[6] === '+' ? 1 : -1) * (Number(m[7]) * 60 + Number(m[8])) * 60;
  return (Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(`0.${m[4] ?? ''}`) - offset + 86400) % 86400;
}

const isTiered = (price: unknown): price is Tiered => typeof price === 'object' && price !== null;
const byStart = (a: { start: number }, b: { start: number }) => a.start - b.start;

/** A tiered price's rate for a span: the last tier whose start its input tokens exceed. */
function tierRate(price: Price, inputTokens: number): number {
  if (!isTiered(price)) return price;
  let rate = price.base;
  for (const tier of [...price.tiers].sort(byStart)) if (inputTokens > tier.start) rate = tier.price;
  return rate;
}

/**
 * The rate of a price key for a span (the tier its input tokens reach). Hot-path helpers are
 * top-level functions: the service runs under tsx, whose transform wraps every closure made per
 * call in a naming call that costs more than the pricing itself.
 */
function rateOf(prices: ModelPrice, key: string, inputTokens: number): number | undefined {
  const price = prices[key];
  return price === undefined ? undefined : tierRate(price, inputTokens);
}

/** The library's term: a tiered price is applied as rate × tokens / 1e6, scaled to its unit. */
function term(price: Price, tokens: number, inputTokens: number, per: number): number {
  if (typeof price === 'number') return (price * tokens) / per;
  if (tokens <= 0) return 0;
  return (((tierRate(price, inputTokens) * tokens) / 1e6) * 1e6) / per;
}

export interface Quote {
  costUsd: number;
  pricing: Pricing;
}

/**
 * The cost of a span's usage by the built-in table, or null when the table has no price for
 * the model (with the provider given, only that provider's models are candidates; without
 * one, the table matches the model name alone).
 */
export function builtinQuote(providerId: string | undefined, model: string, usage: TokenUsage, at: Date | string): Quote | null {
  const matched = match(providerId, model);
  if (!matched || !matched.usable) return null;
  const prices = pricesAt(matched.model, at);
  // Cached and reasoning tokens are charged apart only where the model prices them apart.
  const leaves: Record<string, number> = {
    input:
      usage.input -
      (prices.cache_read_mtok !== undefined ? usage.cacheRead : 0) -
      (prices.cache_write_mtok !== undefined ? usage.cacheWrite : 0),
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    output: usage.output - (prices.output_reasoning_mtok !== undefined ? usage.reasoning : 0),
    reasoning: usage.reasoning,
    requests: 1,
  };
  let input = 0;
  let output = 0;
  let other = 0;
  for (const { price, unit } of termsOf(prices)) {
    const value = term(price, leaves[unit.usage]!, usage.input, unit.per);
    if (unit.direction === 'input') input += value;
    else if (unit.direction === 'output') output += value;
    else other += value;
  }
  const cacheRead = rateOf(prices, 'cache_read_mtok', usage.input);
  const cacheWrite = rateOf(prices, 'cache_write_mtok', usage.input);
  return {
    costUsd: input + output + other,
    pricing: {
      providerId: matched.provider.id,
      modelId: matched.model.id,
      inputPerMillion: rateOf(prices, 'input_mtok', usage.input) ?? 0,
      outputPerMillion: rateOf(prices, 'output_mtok', usage.input) ?? 0,
      ...(cacheRead !== undefined && { cacheReadPerMillion: cacheRead }),
      ...(cacheWrite !== undefined && { cacheWritePerMillion: cacheWrite }),
      source: 'builtin',
      version: builtinVersion,
    },
  };
}
