import { LoupeError } from './errors.js';
import type { ResolvedOptions } from './options.js';

export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when it is not JSON. */
  body: unknown;
}

const VERSION = '0.1.0';

/** One request to the service. Throws LoupeError('network') when no answer comes. */
export async function request(options: ResolvedOptions, method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': `loupe-sdk/${VERSION}` };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.workspaceId) headers['x-workspace-id'] = options.workspaceId;
  if (options.organizationId) headers['x-organization-id'] = options.organizationId;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await options.fetch(`${options.baseUrl}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (cause) {
    throw new LoupeError('network', `${method} ${path} got no answer: ${(cause as Error)?.message ?? cause}`, { cause });
  }
  const raw = await response.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = raw ? JSON.parse(raw) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** The error the service put in its envelope, as a LoupeError('http'). */
export function httpError(method: string, path: string, answer: HttpAnswer, spanCount?: number): LoupeError {
  const error = (answer.body as { error?: { code?: string; message?: string } } | undefined)?.error;
  const message = `${method} ${path} answered ${answer.status}${error?.message ? `: ${error.message}` : ''}`;
  return new LoupeError('http', message, {
    status: answer.status,
    ...(error?.code ? { code: error.code } : {}),
    ...(spanCount !== undefined ? { spanCount } : {}),
  });
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or bad. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
