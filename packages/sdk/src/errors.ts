import type { IngestError } from './types.js';

export type LoupeErrorKind =
  | 'config' // a bad option or variable
  | 'network' // no answer: connection refused, timeout
  | 'http' // an answer with a failing status
  | 'rejected' // the service refused some traces or scores as invalid; they are not re-sent
  | 'dropped' // spans or scores lost: queue full, or retries spent
  | 'prompt'; // a prompt could not be fetched or rendered

/** Every error the client reports: thrown by getPrompt/render, handed to onError otherwise. */
export class LoupeError extends Error {
  override readonly name = 'LoupeError';
  constructor(
    readonly kind: LoupeErrorKind,
    message: string,
    readonly details: {
      status?: number;
      code?: string;
      /** Spans concerned (dropped, or in a failed request). */
      spanCount?: number;
      errors?: IngestError[];
      /** Scores concerned (dropped, refused, or in a failed request). */
      scoreCount?: number;
      /** The scores the service refused: index in the request, path, message. */
      scoreErrors?: { index: number; id: string | null; path: string; message: string }[];
      missing?: string[];
      cause?: unknown;
    } = {},
  ) {
    super(message);
  }
}
