/**
 * How the datasets feature reads the scores of the traces that processed a run's items (a
 * score reaches a run item through its trace, whoever recorded it) without importing the
 * scores feature: the scores feature implements this (src/scores/service/run-scores.ts) and the
 * app hands it to the dataset run routes. Server-side only.
 */

/** The live scores of one name on a trace or its spans: how many, and their mean (boolean: the share of true). */
export interface TraceScoreValue {
  dataType: 'numeric' | 'categorical' | 'boolean';
  n: number;
  mean: number;
  /** A categorical score's category: the one most of the scores have (a tie: the first in code unit order); null for the others. */
  category: string | null;
}

export interface RunScores {
  /** Per trace id, per score name, its scores' value (traces without scores are absent). */
  valuesOfTraces: (workspaceId: string, traceIds: string[]) => Promise<Map<string, Record<string, TraceScoreValue>>>;
  /** Per score name that has a config, whether a higher value is better (a name without one: higher is better). */
  higherIsBetter: (workspaceId: string, names: string[]) => Promise<Map<string, boolean>>;
}
