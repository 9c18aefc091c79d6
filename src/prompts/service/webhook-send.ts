import { postJson } from '../../egress/post-json.js';
import { describeRequestError } from '../../egress/request-error.js';
import type { TargetGuard } from '../../egress/target-guard.js';

/** How much of a receiver's answer is kept: enough to read an error, never a whole body. */
export const RESPONSE_EXCERPT_BYTES = 512;

export interface SendOutcome {
  ok: boolean;
  statusCode: number | null;
  excerpt: string | null;
  error: string | null;
}

export interface SendOptions {
  timeoutMs: number;
  /** Refuses private targets unless the operator allowed them (src/egress/target-guard.ts). */
  guard: TargetGuard;
}

/**
 * POSTs one delivery. Redirects are answers like any other (a 3xx is a failure, never
 * followed), the whole exchange is bounded by `timeoutMs`, and only the first
 * RESPONSE_EXCERPT_BYTES of the body are read before the connection is dropped.
 */
export async function postWebhook(
  target: string,
  body: string,
  headers: Record<string, string>,
  options: SendOptions,
): Promise<SendOutcome> {
  const outcome = await postJson({ url: new URL(target), body, headers, ...options, readAtMost: RESPONSE_EXCERPT_BYTES });
  // Never the address a name resolved to: the answer of GET /api/webhooks/:id/deliveries shows it.
  if (!outcome.answered) return { ok: false, statusCode: null, excerpt: null, error: describeRequestError(outcome.error) };
  const { status } = outcome;
  const excerpt = outcome.body.toString('utf8');
  return {
    ok: status >= 200 && status < 300,
    statusCode: status,
    excerpt: excerpt === '' ? null : excerpt,
    error: status >= 300 && status < 400 ? 'redirects are not followed' : null,
  };
}
