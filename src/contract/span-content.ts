/**
 * How the datasets feature reads a span's input and output ("add this span to a dataset")
 * without importing the traces feature: the traces feature implements this reader
 * (src/traces/query/span-content.ts) and the app hands it to the dataset routes. Server-side only.
 */

export interface SpanContent {
  /** The span's input as stored (any JSON), undefined when it has none. */
  input: unknown;
  output: unknown;
}

/** One span of the workspace's stored traces, or undefined when there is none (or its trace is deleted). */
export type SpanContentReader = (workspaceId: string, traceId: string, spanId: string) => Promise<SpanContent | undefined>;
