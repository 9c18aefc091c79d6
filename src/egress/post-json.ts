import http from 'node:http';
import https from 'node:https';
import type { TargetGuard } from './target-guard.js';

/** A POST of a JSON body to an address outside the service (a webhook receiver, a model provider). */
export interface OutboundPost {
  url: URL;
  body: string;
  /** Beyond content-type and content-length, which the post sets. */
  headers: Record<string, string>;
  /** The whole exchange, from the connection to the answer's last byte read. */
  timeoutMs: number;
  /** Refuses private targets unless the operator allowed them (target-guard.ts). */
  guard: TargetGuard;
  /** The answer is read until this many bytes are in, then the connection is dropped. */
  readAtMost: number;
}

/**
 * The answer: its status and its first bytes, `whole` when it ended within `readAtMost`, and
 * `error` when it broke off after its status came (a reset, the timeout). Or no answer, and the
 * error that stopped the exchange before one: a refusal by the guard (RefusedTarget), a network
 * failure, the timeout. Nothing is thrown; the caller words the outcome (request-error.ts).
 */
export type PostOutcome =
  { answered: true; status: number; body: Buffer; whole: boolean; error?: unknown } | { answered: false; error: unknown };

/**
 * POSTs once, on a fresh connection (no pooled socket outlives the guard's check of its
 * address). Redirects are answers like any other, never followed.
 */
export function postJson(post: OutboundPost): Promise<PostOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let guarded: ReturnType<TargetGuard['connectOptions']>;
    try {
      guarded = post.guard.connectOptions(post.url);
    } catch (error) {
      resolve({ answered: false, error });
      return;
    }
    const client = post.url.protocol === 'https:' ? https : http;
    const request = client.request(post.url, {
      method: 'POST',
      headers: { ...post.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(post.body)) },
      agent: false,
      ...guarded,
    });
    const timer = setTimeout(() => request.destroy(new Error(`timed out after ${post.timeoutMs} ms`)), post.timeoutMs);
    request.on('error', (error) => finish({ answered: false, error }));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const answer = (whole: boolean, error?: unknown) => {
        const body = Buffer.concat(chunks).subarray(0, post.readAtMost);
        finish({ answered: true, status: response.statusCode ?? 0, body, whole, ...(error !== undefined && { error }) });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= post.readAtMost) answer(false);
      });
      response.on('end', () => answer(true));
      response.on('error', (error) => answer(false, error));
    });
    request.end(post.body);
  });
}
