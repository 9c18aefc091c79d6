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

/** A trace found by what changed in the store, with the version of its summary's last write. */
export interface ChangedTrace extends FoundTrace {
  /** The summary's version (an integer as text): every later write of the trace takes a higher one. */
  version: string;
}

export interface ChangedTraceFilter {
  name?: string;
  tags?: string[];
  environment?: string;
  /** Traces that started after this time (ISO): an evaluator takes none older than itself. */
  startedAfter: string;
  /** Traces whose summary was last written at a version above this (an integer as text). */
  changedAfter: string;
  /** Leaves out the traces of this source (a judge's own traces: never targets). */
  exceptSource?: string;
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
  /**
   * The workspace's traces matching the filter whose summary was written after `changedAfter`,
   * by that version ascending (ties by trace id), at most `limit`, and the cursor of the next
   * page; `cursor` continues a walk of the same filter. A version comes from the writing
   * process's clock (nanoseconds since the epoch): a write may become readable a little after a
   * higher version did (another process's flush, a write replayed after a crash), so a caller
   * that keeps a mark holds it a while behind the clock.
   */
  findChangedTraces(
    workspaceId: string,
    filter: ChangedTraceFilter,
    limit: number,
    cursor?: string,
  ): Promise<{ traces: ChangedTrace[]; next: string | null }>;
  /** The trace, or undefined when it is gone. */
  readTrace(workspaceId: string, traceId: string): Promise<EvaluationTarget | undefined>;
  /** Many traces at once (a worker's jobs read together); traces gone are absent. */
  readTraces(workspaceId: string, traceIds: string[]): Promise<Map<string, EvaluationTarget>>;
  /** The ids of the spans of these traces the filter takes, in each trace's start order. */
  findSpans(workspaceId: string, traceIds: string[], filter: EvaluationSpanFilter): Promise<{ traceId: string; spanId: string }[]>;
  /** The span (its content and figures, its trace's id), or undefined when it is gone. */
  readSpan(workspaceId: string, traceId: string, spanId: string): Promise<EvaluationTarget | undefined>;
}
