/**
 * How the evaluators feature reads judge prompts and output schemas from prompt management
 * without importing the prompts feature: the prompts feature implements this
 * (src/prompts/service/evaluation-prompts.ts) and the app hands it over. Server-side only.
 */

/** A prompt by name, and a label or a version (neither: the latest). */
export interface EvaluationPromptRef {
  name: string;
  label?: string;
  version?: string;
}

export interface EvaluationPrompt {
  id: number;
  version: string;
  systemPrompt: string;
  humanPrompt: string | null;
  outputSchema: Record<string, unknown> | null;
}

export interface EvaluationPrompts {
  /** The version the reference names, or undefined when there is none. */
  resolve(workspaceId: string, ref: EvaluationPromptRef): Promise<EvaluationPrompt | undefined>;
  /** The problems of a value against an output schema, as `/path message`; none when valid. */
  validateOutput(schema: Record<string, unknown>, value: unknown): string[];
}
