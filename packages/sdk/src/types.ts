/** Wire shapes of the reference client, as SPEC.md describes them. The client ships without the
 * server code; what both sides must agree on (span kinds, templates) is the contract's. */

export { SPAN_KINDS, type SpanKind } from './contract/index.js';
import type { SpanKind } from './contract/index.js';

export type SpanStatus = 'ok' | 'error' | 'unset';

export interface SpanMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
  toolCallId?: string;
}

export interface SpanToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  result?: unknown;
}

export interface SpanDocument {
  content: string;
  metadata?: Record<string, unknown>;
  score?: number;
}

export interface SpanIO {
  messages?: SpanMessage[];
  toolCalls?: SpanToolCall[];
  documents?: SpanDocument[];
  text?: string;
  raw?: unknown;
}

export interface SpanMetrics {
  model?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  /** Part of inputTokens: read from / written to the provider's prompt cache. */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Part of outputTokens. */
  reasoningTokens?: number;
  costUsd?: number;
  latencyMs?: number;
  ttftMs?: number;
}

export interface SpanEvent {
  name: string;
  timestamp: string;
  attributes?: Record<string, unknown>;
}

/** One span as POST /api/traces takes it. */
export interface SpanPayload {
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: SpanKind;
  input?: SpanIO;
  output?: SpanIO;
  startTime: string;
  endTime: string;
  durationMs: number;
  model?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  costUsd?: number;
  ttftMs?: number;
  status: SpanStatus;
  statusMessage?: string;
  attributes?: Record<string, unknown>;
  events?: SpanEvent[];
  metadata?: Record<string, unknown>;
  /** The prompt version this span used (GET /api/prompt/:id/metrics counts it). */
  promptName?: string;
  promptVersion?: string;
}

/** One trace of an ingest body; a trace may arrive over many of them. */
export interface TracePayload {
  traceId: string;
  name?: string;
  sessionId?: string;
  source: string;
  environment?: string;
  spans: SpanPayload[];
}

export interface IngestError {
  index: number;
  traceId?: string | null;
  path: string;
  message: string;
}

export interface IngestResult {
  accepted: number;
  rejected: number;
  errors: IngestError[];
}

/** A prompt version record of GET /api/prompt. */
export interface PromptRecord {
  id: number;
  name: string;
  version: string;
  promptGroupId: string;
  isLatest: boolean;
  /** Labels on this version ("latest" first when it is the latest). */
  labels?: string[];
  systemPrompt: string;
  humanPrompt?: string | null;
  rawPrompt?: string | null;
  description?: string | null;
  metadata?: Record<string, unknown>;
  outputSchema?: Record<string, unknown> | null;
}
