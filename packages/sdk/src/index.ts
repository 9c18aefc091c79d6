export { Loupe, type WrapOptions } from './client.js';
export { LoupeError, type LoupeErrorKind } from './errors.js';
export type { FetchLike, LoupeOptions, ResolvedOptions } from './options.js';
export { PromptClient, render, type GetPromptOptions, type Prompt, type RenderedPrompt } from './prompts.js';
export { renderTemplate, templateText, templateVariables, type RenderedTemplate } from './contract/index.js';
export { AgentScope, CodingSession, SESSION_EVENTS, SubAgent, ToolCall, type CodingSessionOptions } from './session.js';
export type { ScoreDataType, ScoreIngestResult, ScoreInput, ScoreOptions, ScorePayload } from './scores.js';
export { Span, type EndOptions, type PromptRef, type SpanOptions } from './span.js';
export type { TransportStats } from './transport.js';
export * from './types.js';
export {
  type Evaluator,
  type EvaluatorScore,
  type ExperimentFailure,
  type ExperimentItem,
  type ExperimentOptions,
  type ExperimentSummary,
} from './experiment.js';
