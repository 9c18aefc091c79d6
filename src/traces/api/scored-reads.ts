import type { ScoreAverages, ScoreOnTarget } from '../../contract/trace-scores.js';

/**
 * Scores laid onto trace reads (the scores feature reads them: contract/trace-scores.ts): a
 * trace's own scores beside it, each span's on the span; per-name averages on list items. Only
 * where there are some: a trace without scores reads as it did before scores existed.
 */

export function withScores<T extends { spans: S[] }, S extends { spanId: string }>(
  trace: T,
  scores: ScoreOnTarget[],
): T & { scores?: ScoreOnTarget[]; spans: (S & { scores?: ScoreOnTarget[] })[] } {
  const bySpan = new Map<string, ScoreOnTarget[]>();
  const own: ScoreOnTarget[] = [];
  for (const score of scores) {
    if (score.spanId === null) own.push(score);
    else bySpan.set(score.spanId, [...(bySpan.get(score.spanId) ?? []), score]);
  }
  if (scores.length === 0) return trace;
  return {
    ...trace,
    ...(own.length > 0 && { scores: own }),
    spans: trace.spans.map((span) => {
      const ofSpan = bySpan.get(span.spanId);
      return ofSpan ? { ...span, scores: ofSpan } : span;
    }),
  };
}

/** A trace (or its tree) and its scores, read at once: the id is the trace's, an exact match for both. */
export async function readWithScores<T extends { spans: S[] }, S extends { spanId: string }>(
  read: Promise<T>,
  scores: Promise<ScoreOnTarget[]> | undefined,
) {
  const [trace, ofTrace] = await Promise.all([read, scores]);
  return ofTrace ? withScores(trace, ofTrace) : trace;
}

/** Items with their per-name score averages, read for the items' keys (`averagesOf`). */
export async function averaged<T>(
  items: T[],
  key: (item: T) => string,
  averagesOf: (keys: string[]) => Promise<Map<string, ScoreAverages>>,
) {
  return withAverages(items, key, await averagesOf(items.map(key)));
}

export function withAverages<T>(items: T[], key: (item: T) => string | null, averages: Map<string, ScoreAverages>): T[] {
  return items.map((item) => {
    const id = key(item);
    const scores = id === null ? undefined : averages.get(id);
    return scores ? { ...item, scores } : item;
  });
}
