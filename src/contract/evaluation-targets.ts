/**
 * How the evaluators feature finds and reads the traces it scores without importing the
 * traces feature: the traces feature implements this (src/traces/query/evaluation-targets.ts) and
 * the app hands it to the evaluators' worker. Server-side only.
 */

/** What an evaluator reads of a trace: its root span's content and the trace's figures. */
export interface EvaluationTarget {
  traceId: string;
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
  /** Traces that started at or after this time (ISO). */
  startedAfter: string;
}

export interface FoundTrace {
  traceId: string;
  startTime: string;
  /** Null while the trace runs (no root span yet). */
  endTime: string | null;
}

export interface EvaluationTraces {
  /** The workspace's traces matching the filter, by start time ascending, at most `limit`. */
  findTraces(workspaceId: string, filter: EvaluationTraceFilter, limit: number): Promise<FoundTrace[]>;
  /** The trace, or undefined when it is gone. */
  readTrace(workspaceId: string, traceId: string): Promise<EvaluationTarget | undefined>;
}
