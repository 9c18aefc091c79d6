export { Loupe, type WrapOptions } from './client.js';
export { LoupeError, type LoupeErrorKind } from './errors.js';
export type { FetchLike, LoupeOptions, ResolvedOptions } from './options.js';
export { PromptClient, render, renderTemplate, templateVariables, type GetPromptOptions, type Prompt, type RenderedPrompt } from './prompts.js';
export { AgentScope, CodingSession, SESSION_EVENTS, SubAgent, ToolCall, type CodingSessionOptions } from './session.js';
export { Span, type EndOptions, type PromptRef, type SpanOptions } from './span.js';
export type { TransportStats } from './transport.js';
export * from './types.js';
