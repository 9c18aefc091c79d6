import type { SpanGroup } from '../tables/traces-table.js';
import type { SpanFacts } from '../tables/spans-table.js';

/**
 * The usage rules of a trace's summary (summary.ts): which spans' usage the trace counts, their
 * sums and costs by source, the span naming the trace's model, and the spans grouped by model,
 * provider and kind for the analytics.
 */

export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const isLlm = (span: SpanFacts) => span.kind.startsWith('llm.');
const usageKeys = ['input_tokens', 'output_tokens', 'total_tokens', 'cost_usd'] as const;
type UsageKey = (typeof usageKeys)[number];

/**
 * A sum kept finite: only values stored before the span bounds existed can overflow a 64-bit
 * float, and an infinite sum would be written as null (JSON has no infinity), so it stays at
 * the largest number the format holds.
 */
const finite = (n: number) => (Number.isFinite(n) ? n : Number.MAX_VALUE);

/** A sum over the values that were sent; null when none was (a Nullable column's sum). */
export function sumSent(spans: SpanFacts[], key: UsageKey): number | null {
  let total: number | null = null;
  for (const span of spans) {
    const value = span[key];
    if (value !== null) total = finite((total ?? 0) + value);
  }
  return total;
}

/** The tokens that rank a generation span for the trace's model: the total, else input plus output. */
const rankTokens = (span: SpanFacts) => span.total_tokens ?? (span.input_tokens ?? 0) + (span.output_tokens ?? 0);

/** The LLM span naming the trace's model: one with a model first, then most tokens, then the highest span id. */
export function modelSpan(spans: SpanFacts[]): SpanFacts | undefined {
  let best: SpanFacts | undefined;
  for (const span of spans) {
    if (!isLlm(span)) continue;
    if (!best) {
      best = span;
      continue;
    }
    const byModel = Number(span.model !== '') - Number(best.model !== '');
    const byTokens = rankTokens(span) - rankTokens(best);
    if (byModel > 0 || (byModel === 0 && (byTokens > 0 || (byTokens === 0 && compareText(span.span_id, best.span_id) > 0)))) best = span;
  }
  return best;
}

/** Whether a span carries a call's figures: any token count or a cost. */
const carriesFigures = (span: SpanFacts) =>
  span.input_tokens !== null || span.output_tokens !== null || span.total_tokens !== null || span.cost_usd !== null;

/** Chat and completion spans record text generations; embeddings are another call. */
const family = (kind: string) => (kind === 'llm.embedding' ? 'embedding' : kind === 'rerank' ? 'rerank' : 'generation');

/**
 * The spans whose usage the trace counts (DESIGN.md, docs/decisions/060-cost-and-prices.md):
 * one count per model call, whichever library recorded it first.
 *
 * - Without any generation span (`llm.*`): every span.
 * - A generation span counts unless a generation span of its family (chat and completion
 *   alike; embeddings apart) above it, at any depth, carries figures: two libraries recording
 *   one call (an instrumentation's span around the span an LLM SDK makes of its own call,
 *   the Vercel AI SDK's `ai.generateText` around its steps, an embeddings call inside
 *   another) count once, at the outermost span with figures. A generation span without
 *   figures never hides the spans below it.
 * - A span of another kind counts only when it carries figures, has generation spans below it
 *   and none of them carries figures, and no span above it counts already: a root that a library
 *   wrote a call's figures on (LangSmith's streaming call) whose generation span has none. An
 *   agent span repeating its children's usage (`invoke_agent` with `gen_ai.usage.*`) is not
 *   counted beside them, nor a span of another kind beside the generation spans of the trace.
 */
export function countedSpans(spans: SpanFacts[]): Set<SpanFacts> {
  if (!spans.some(isLlm)) return new Set(spans);
  const byId = new Map<string, SpanFacts>();
  for (const span of spans) byId.set(span.span_id, span);
  /** The ancestors of a span, nearest first (a cycle in bad data ends the walk). */
  const ancestors = (span: SpanFacts): SpanFacts[] => {
    const list: SpanFacts[] = [];
    const seen = new Set<SpanFacts>([span]);
    for (let parent = byId.get(span.parent_span_id); parent && !seen.has(parent); parent = byId.get(parent.parent_span_id)) {
      seen.add(parent);
      list.push(parent);
    }
    return list;
  };
  const counted = new Set<SpanFacts>();
  /** Spans of other kinds with a generation span below them that carries figures. */
  const repeated = new Set<SpanFacts>();
  /** Spans of other kinds with any generation span below them. */
  const overGeneration = new Set<SpanFacts>();
  const otherCarriers: SpanFacts[] = [];
  for (const span of spans) {
    if (!isLlm(span)) {
      if (carriesFigures(span)) otherCarriers.push(span);
      continue;
    }
    const above = ancestors(span);
    const own = family(span.kind);
    if (!above.some((a) => isLlm(a) && family(a.kind) === own && carriesFigures(a))) counted.add(span);
    const figures = carriesFigures(span);
    for (const a of above) {
      if (isLlm(a)) continue;
      overGeneration.add(a);
      if (figures) repeated.add(a);
    }
  }
  const alone = otherCarriers.filter((span) => overGeneration.has(span) && !repeated.has(span));
  const aloneSet = new Set(alone);
  for (const span of alone) if (!ancestors(span).some((a) => aloneSet.has(a))) counted.add(span);
  return counted;
}

/** Cost of the counted spans by source: a computed cost, and any other (sent; '' on rows older than costs computed). */
export function costBySource(counted: Iterable<SpanFacts>) {
  let provided = 0;
  let computed = 0;
  let unpriced = 0;
  for (const span of counted) {
    if (span.cost_source === 'computed') computed += span.cost_usd ?? 0;
    else provided += span.cost_usd ?? 0;
    if (span.cost_source === 'none') unpriced += 1;
  }
  return { cost_provided: provided, cost_computed: computed, unpriced_spans: unpriced };
}

/**
 * The trace's spans grouped by one dimension, keys in byte order: span and error counts, the
 * usage that counts (the counted spans', the rule of the trace's own sums), and every
 * duration, for exact quantiles.
 */
export function spanGroups(spans: SpanFacts[], dimension: 'model' | 'provider' | 'kind', counted: Set<SpanFacts>): SpanGroup[] {
  const groups = new Map<string, SpanGroup>();
  for (const span of spans) {
    const key = span[dimension];
    let group = groups.get(key);
    if (!group) {
      group = { key, spans: 0, errors: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0, durations: [] };
      groups.set(key, group);
    }
    group.spans += 1;
    if (span.status === 'error') group.errors += 1;
    if (counted.has(span)) for (const usage of usageKeys) group[usage] = finite(group[usage] + (span[usage] ?? 0));
    group.durations.push(span.duration_ms);
  }
  return [...groups.values()].sort((a, b) => compareText(a.key, b.key));
}
