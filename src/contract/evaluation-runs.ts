/**
 * How the evaluators feature reads experiment runs (a run's items, each with the trace that
 * processed it and its dataset item) without importing the datasets feature: the datasets
 * feature implements this (src/datasets/service/evaluation-runs.ts) and the app hands it over.
 * Server-side only.
 */

/** A run item as an evaluator finds it. */
export interface FoundRunItem {
  runId: string;
  datasetItemId: string;
  traceId: string;
  /** When the item was recorded (ISO): the scan's order. */
  createdAt: string;
}

/** What a judge may be shown of a run item beside its trace: the dataset item and the run's output. */
export interface RunItemContent {
  input: unknown;
  expectedOutput: unknown;
  /** The output the run recorded for the item; undefined when it recorded none (the trace's output stands). */
  output: unknown;
  metadata: Record<string, unknown>;
}

export interface RunItemWindow {
  /** Items of this dataset's runs only; absent: every dataset of the workspace. */
  datasetId?: string;
  /** Items recorded after this time (ISO). */
  createdAfter: string;
  createdBefore?: string;
  /** Continues a walk after this item (items recorded at one time are ordered by run and item). */
  afterItem?: { createdAt: string; runId: string; datasetItemId: string };
}

export interface EvaluationRuns {
  /** The workspace's run items recorded in the window, oldest first, at most `limit`. */
  findItems(workspaceId: string, window: RunItemWindow, limit: number): Promise<FoundRunItem[]>;
  /** Every item of one run (an experiment run evaluated whole); undefined when the workspace has no such run. */
  itemsOfRun(workspaceId: string, runId: string): Promise<FoundRunItem[] | undefined>;
  /** The item's dataset content at the run's dataset version, or undefined when it is gone. */
  readItem(workspaceId: string, runId: string, datasetItemId: string): Promise<RunItemContent | undefined>;
}
