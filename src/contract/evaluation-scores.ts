/**
 * How the evaluators feature writes the scores it produces through the scores feature's
 * ingest (so configs validate them like any score) without importing it: the app wires this.
 */
export interface EvaluationScore {
  /** Stable per job, so a job repeated after a crash corrects its score instead of adding one. */
  id: string;
  name: string;
  dataType: 'numeric' | 'boolean';
  value: number | boolean;
  comment?: string;
  traceId: string;
  /** A span target's id; absent when the score is on the trace. */
  spanId?: string;
  metadata: Record<string, unknown>;
  /** The judge's trace (source `evaluator`) the score came from: the score's own `evalTraceId`. */
  evalTraceId?: string;
  /**
   * No score of this id was ever written (its job's first attempt): the store need not look for
   * an earlier write whose creation time a correction keeps.
   */
  firstWrite?: boolean;
}

/** Stores the score (source `eval`); answers its id, or why it was refused. */
export type RecordEvaluationScore = (
  workspaceId: string,
  evaluatorId: string,
  score: EvaluationScore,
) => Promise<{ id: string } | { error: string }>;

/**
 * Checks a score as its store would (the config of its name: data type, bounds, categories)
 * without storing it: the preview answers what the worker's score would be, or the same refusal
 * (`error`, worded as `RecordEvaluationScore` words it).
 */
export type CheckEvaluationScore = (
  workspaceId: string,
  score: Pick<EvaluationScore, 'name' | 'dataType' | 'value'>,
) => Promise<{ value: number; stringValue: string } | { error: string }>;
