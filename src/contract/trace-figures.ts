/**
 * How the datasets feature reads the figures of the traces that processed a run's items
 * without importing the traces feature: the traces feature implements this reader
 * (src/traces/query/trace-figures.ts) and the app hands it to the dataset run routes. Server-side only.
 */

/** One trace's cost, latency and whether it failed, as its live summary says. */
export interface TraceFigures {
  /** null when no span of the trace reported or was priced a cost. */
  costUsd: number | null;
  /** The root span's duration; null while the trace runs. */
  latencyMs: number | null;
  /** The trace's status is error or one of its spans failed. */
  error: boolean;
}

/** Per trace id of the workspace, its figures; traces not stored (or deleted) are absent. */
export type TraceFiguresReader = (workspaceId: string, traceIds: string[]) => Promise<Map<string, TraceFigures>>;
