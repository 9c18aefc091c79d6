/**
 * How the evaluators feature finds and reads the traces it scores without importing the
 * traces feature: the traces feature implements this (src/traces/query/evaluation-targets.ts) and
 * the app hands it to the evaluators' worker. Server-side only.
 */

/**
 * What an evaluator reads of a target: a trace (its root span's content and the trace's
 * figures), a span (its own content and figures), or an experiment run item (its trace, with
 * the dataset item's input and expected output: src/contract/evaluation-runs.ts).
 */
export interface EvaluationTarget {
  traceId: string;
  /** A span target's id; absent for a trace. */
  spanId?: string;
  input: unknown;
  output: unknown;
  /** Only experiment items have one; a trace has none. */
  expectedOutput?: unknown;
  metadata: Record<string, unknown>;
  attributes: Record<string, unknown>;
  durationMs: number | null;
  costUsd: number | null;
}

export interface EvaluationTraceFilter {
  name?: string;
  tags?: string[];
  environment?: string;
  /** Traces that started after this time (ISO). */
  startedAfter: string;
  /** Traces that started before this time (ISO); a backfill's window. */
  startedBefore?: string;
}

/** Which spans of a trace a span evaluator takes; each absent one matches every span. */
export interface EvaluationSpanFilter {
  name?: string;
  kind?: string;
  promptName?: string;
}

export interface FoundTrace {
  traceId: string;
  startTime: string;
  /** Null while the trace runs (no root span yet). */
  endTime: string | null;
  /** The trace's source: `evaluator` for a judge's own call, never a target. */
  source: string;
}

export interface EvaluationTraces {
  /**
   * The workspace's traces matching the filter, by start time ascending, at most `limit`, and
   * the cursor of the next page (traces sharing a start time are never skipped between pages);
   * `cursor` continues a walk of the same filter.
   */
  findTraces(
    workspaceId: string,
    filter: EvaluationTraceFilter,
    limit: number,
    cursor?: string,
  ): Promise<{ traces: FoundTrace[]; next: string | null }>;
  /** The trace, or undefined when it is gone. */
  readTrace(workspaceId: string, traceId: string): Promise<EvaluationTarget | undefined>;
  /** Many traces at once (a worker's jobs read together); traces gone are absent. */
  readTraces(workspaceId: string, traceIds: string[]): Promise<Map<string, EvaluationTarget>>;
  /** The ids of the spans of these traces the filter takes, in each trace's start order. */
  findSpans(workspaceId: string, traceIds: string[], filter: EvaluationSpanFilter): Promise<{ traceId: string; spanId: string }[]>;
  /** The span (its content and figures, its trace's id), or undefined when it is gone. */
  readSpan(workspaceId: string, traceId: string, spanId: string): Promise<EvaluationTarget | undefined>;
}
