import http from 'node:http';
import https from 'node:https';
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
export function postWebhook(target: string, body: string, headers: Record<string, string>, options: SendOptions): Promise<SendOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    // Never the address a name resolved to: the answer of GET /api/webhooks/:id/deliveries shows it.
    const failure = (error: unknown): SendOutcome => ({ ok: false, statusCode: null, excerpt: null, error: describeRequestError(error) });

    const url = new URL(target);
    let guarded: ReturnType<TargetGuard['connectOptions']>;
    try {
      guarded = options.guard.connectOptions(url);
    } catch (error) {
      resolve(failure(error));
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      agent: false, // a fresh connection per delivery: no pooled socket outlives the check of its address
      ...guarded,
    });
    const timer = setTimeout(() => request.destroy(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('error', (error) => finish(failure(error)));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const status = response.statusCode ?? 0;
        const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
        finish({
          ok: status >= 200 && status < 300,
          statusCode: status,
          excerpt: excerpt === '' ? null : excerpt,
          error: status >= 300 && status < 400 ? 'redirects are not followed' : null,
        });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_EXCERPT_BYTES) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(body);
  });
}
