/**
 * How the prompts feature reads figures of the trace store without importing it: the trace
 * store implements this reader (src/traces/tables/spans-table.ts, promptFiguresReader) and the app hands it to the
 * prompt routes. Server-side only; not part of the client package's contract.
 */

/** The figures of the spans that named one version of a prompt. */
export interface PromptVersionFigures {
  /** As the spans name it; '' for spans that named the prompt but no version. */
  version: string;
  calls: number;
  errorCount: number;
  errorRate: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
  /** null when not a finite number. */
  costPerCall: number | null;
  latencyP50: number | null;
  latencyP95: number | null;
  /** null when no span of the version reported a time to first token. */
  ttftP50: number | null;
}

/** Per version, the spans of the workspace naming `promptName` that start strictly inside the window (ISO 8601 bounds, each optional). */
export type PromptFiguresReader = (
  workspaceId: string,
  promptName: string,
  window: { startAfter?: string | undefined; startBefore?: string | undefined },
) => Promise<PromptVersionFigures[]>;
