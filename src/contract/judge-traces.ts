/**
 * How the evaluators feature records each judge call as a trace of the workspace (source
 * `evaluator`: what evaluation costs, in tokens and money) without importing the traces
 * feature: the app wires it over the traces' ingest (src/app.ts), which validates the trace and
 * prices its generation span with the workspace's prices like any other.
 */
export interface JudgeCall {
  traceId: string;
  /** The evaluator's name: the trace's name. */
  name: string;
  evaluatorId: string;
  evaluatorVersion: number;
  jobId: string;
  /** What was judged. */
  target: { traceId: string; spanId?: string };
  provider: 'openai' | 'anthropic';
  model: string;
  messages: { role: 'system' | 'user'; content: string }[];
  /** The answer's text (or the structured answer as JSON); undefined when the call failed. */
  output?: string;
  inputTokens?: number;
  outputTokens?: number;
  startTime: string;
  endTime: string;
  /** Why the call failed; absent when the provider answered. */
  error?: string;
}

/** Stores the call's trace; resolves once it is taken (readable soon after). */
export type RecordJudgeTrace = (workspaceId: string, call: JudgeCall) => Promise<void>;
