export { Loupe, type WrapOptions } from './client.js';
export { LoupeError, type LoupeErrorKind } from './errors.js';
export type { FetchLike, LoupeOptions, ResolvedOptions } from './options.js';
export { render, type GetPromptOptions, type Prompt, type RenderedPrompt } from './prompts.js';
export { renderTemplate, templateText, templateVariables, type RenderedTemplate } from './contract/index.js';
export { AgentScope, CodingSession, SESSION_EVENTS, SubAgent, ToolCall, type CodingSessionOptions } from './session.js';
export { Span, type EndOptions, type SpanOptions } from './span.js';
export type { TransportStats } from './transport.js';
export * from './types.js';
