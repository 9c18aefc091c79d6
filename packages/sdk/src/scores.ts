import { randomUUID } from 'node:crypto';
import { nowIso } from './clock.js';
import { toJsonObject } from './json-safe.js';

export type ScoreDataType = 'numeric' | 'categorical' | 'boolean';

/** What a score says besides its name and value (span.score's third argument). */
export interface ScoreOptions {
  /** Yours for an idempotent upsert: re-sending it corrects the score. Default: a new UUID. */
  id?: string;
  /** Default: the score config's type, else from the value (number, string, boolean). */
  dataType?: ScoreDataType;
  comment?: string;
  metadata?: Record<string, unknown>;
  /** When the score was given; default now. */
  timestamp?: Date | string;
  /** Default: the client's environment. */
  environment?: string;
  /** The trace of the judge (an evaluator) that produced the score. */
  evalTraceId?: string;
}

/** One score for loupe.score: its target is a trace (traceId), a span (traceId + spanId) or a session. */
export interface ScoreInput extends ScoreOptions {
  name: string;
  /** A number (numeric), a category label (categorical), or true/false (boolean). */
  value: number | string | boolean;
  traceId?: string;
  spanId?: string;
  sessionId?: string;
}

/** One score as POST /api/scores takes it. */
export interface ScorePayload {
  id: string;
  name: string;
  value: number | string | boolean;
  dataType?: ScoreDataType;
  comment?: string;
  metadata?: Record<string, unknown>;
  source: 'sdk';
  environment?: string;
  timestamp: string;
  traceId?: string;
  spanId?: string;
  sessionId?: string;
  evalTraceId?: string;
}

/** The answer of POST /api/scores: per item, in the order sent. */
export interface ScoreIngestResult {
  accepted: number;
  rejected: number;
  ids: (string | null)[];
  errors: { index: number; id: string | null; path: string; message: string }[];
}

/**
 * The score as sent, snapshotted now. The id is fixed here, so a retried request corrects
 * the score it already stored instead of adding a second one.
 */
export function scorePayload(input: ScoreInput, defaultEnvironment: string | undefined): ScorePayload {
  const timestamp = input.timestamp instanceof Date ? input.timestamp.toISOString() : (input.timestamp ?? nowIso());
  const environment = input.environment ?? defaultEnvironment;
  const metadata = input.metadata ? toJsonObject(input.metadata) : undefined;
  return {
    id: input.id ?? randomUUID(),
    name: input.name,
    value: input.value,
    ...(input.dataType ? { dataType: input.dataType } : {}),
    ...(input.comment !== undefined ? { comment: input.comment } : {}),
    ...(metadata ? { metadata } : {}),
    source: 'sdk',
    ...(environment ? { environment } : {}),
    timestamp,
    ...(input.traceId !== undefined ? { traceId: input.traceId } : {}),
    ...(input.spanId !== undefined ? { spanId: input.spanId } : {}),
    ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
    ...(input.evalTraceId !== undefined ? { evalTraceId: input.evalTraceId } : {}),
  };
}
