import { LoupeError } from './errors.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface LoupeOptions {
  /** Workspace API key (x-api-key). Env LOUPE_API_KEY. Without one, nothing is sent. */
  apiKey?: string;
  /** Service base address. Env LOUPE_BASE_URL; default http://127.0.0.1:3000. */
  baseUrl?: string;
  /** Trace source. Env LOUPE_SOURCE; default sdk. */
  source?: string;
  /** Trace environment (production, staging, development). Env LOUPE_ENVIRONMENT. */
  environment?: string;
  /** Session of every new trace. Env LOUPE_SESSION_ID. */
  sessionId?: string;
  /** For organization- or user-scoped keys. Env LOUPE_WORKSPACE_ID, LOUPE_ORGANIZATION_ID. */
  workspaceId?: string;
  organizationId?: string;
  /** Env LOUPE_FLUSH_INTERVAL_MS; default 5000. */
  flushIntervalMs?: number;
  /** Spans that trigger a flush; a request takes all that wait, up to 1,000 (or this) and 4 MiB. Env LOUPE_BATCH_SIZE; default 10. */
  batchSize?: number;
  /** Retries of a failed request. Env LOUPE_MAX_RETRIES; default 3. */
  maxRetries?: number;
  /** First retry delay, doubling each retry. Env LOUPE_RETRY_BASE_DELAY_MS; default 1000. */
  retryBaseDelayMs?: number;
  /** Longest wait before a retry; a longer Retry-After drops the batch. Env LOUPE_MAX_RETRY_DELAY_MS; default 60000. */
  maxRetryDelayMs?: number;
  /** Spans held at most; past it the oldest are dropped. Env LOUPE_MAX_QUEUE_SIZE; default 10000. */
  maxQueueSize?: number;
  /** Longest wait for one HTTP request. Env LOUPE_TIMEOUT_MS; default 10000. */
  timeoutMs?: number;
  /** Prompt cache time-to-live. Env LOUPE_PROMPT_CACHE_TTL_MS; default 60000. */
  promptCacheTtlMs?: number;
  /** false turns sending off (spans still work). Env LOUPE_ENABLED=false. */
  enabled?: boolean;
  /** Where transport errors go; they never reach the caller's code. Default: console.warn. */
  onError?: (error: LoupeError) => void;
  /** The fetch to use (tests, proxies). Default: the global fetch. */
  fetch?: FetchLike;
  /** The environment to read LOUPE_* from. Default: process.env. */
  env?: Record<string, string | undefined>;
}

export interface ResolvedOptions {
  apiKey: string | undefined;
  baseUrl: string;
  source: string;
  environment: string | undefined;
  sessionId: string | undefined;
  workspaceId: string | undefined;
  organizationId: string | undefined;
  flushIntervalMs: number;
  batchSize: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
  maxQueueSize: number;
  timeoutMs: number;
  promptCacheTtlMs: number;
  enabled: boolean;
  onError: (error: LoupeError) => void;
  fetch: FetchLike;
}

const text = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());

function count(name: string, given: number | undefined, raw: string | undefined, fallback: number, min: number): number {
  const value = given ?? (text(raw) === undefined ? fallback : Number(text(raw)));
  if (!Number.isFinite(value) || !Number.isInteger(value) || value < min) {
    throw new LoupeError('config', `${name} must be an integer >= ${min}, got ${given ?? raw}`);
  }
  return value;
}

/** Options win over LOUPE_* variables, which win over the defaults. A bad value throws at once. */
export function resolveOptions(options: LoupeOptions = {}): ResolvedOptions {
  const env = options.env ?? process.env;
  const apiKey = options.apiKey ?? text(env.LOUPE_API_KEY);
  const enabledRaw = text(env.LOUPE_ENABLED)?.toLowerCase();
  const baseUrl = (options.baseUrl ?? text(env.LOUPE_BASE_URL) ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  try {
    new URL(baseUrl);
  } catch {
    throw new LoupeError('config', `baseUrl must be an absolute URL, got ${baseUrl}`);
  }
  return {
    apiKey,
    baseUrl,
    source: options.source ?? text(env.LOUPE_SOURCE) ?? 'sdk',
    environment: options.environment ?? text(env.LOUPE_ENVIRONMENT),
    sessionId: options.sessionId ?? text(env.LOUPE_SESSION_ID),
    workspaceId: options.workspaceId ?? text(env.LOUPE_WORKSPACE_ID),
    organizationId: options.organizationId ?? text(env.LOUPE_ORGANIZATION_ID),
    flushIntervalMs: count('flushIntervalMs', options.flushIntervalMs, env.LOUPE_FLUSH_INTERVAL_MS, 5000, 1),
    batchSize: count('batchSize', options.batchSize, env.LOUPE_BATCH_SIZE, 10, 1),
    maxRetries: count('maxRetries', options.maxRetries, env.LOUPE_MAX_RETRIES, 3, 0),
    retryBaseDelayMs: count('retryBaseDelayMs', options.retryBaseDelayMs, env.LOUPE_RETRY_BASE_DELAY_MS, 1000, 0),
    maxRetryDelayMs: count('maxRetryDelayMs', options.maxRetryDelayMs, env.LOUPE_MAX_RETRY_DELAY_MS, 60_000, 0),
    maxQueueSize: count('maxQueueSize', options.maxQueueSize, env.LOUPE_MAX_QUEUE_SIZE, 10_000, 1),
    timeoutMs: count('timeoutMs', options.timeoutMs, env.LOUPE_TIMEOUT_MS, 10_000, 1),
    promptCacheTtlMs: count('promptCacheTtlMs', options.promptCacheTtlMs, env.LOUPE_PROMPT_CACHE_TTL_MS, 60_000, 0),
    enabled: (options.enabled ?? !(enabledRaw === 'false' || enabledRaw === '0')) && apiKey !== undefined,
    onError: options.onError ?? ((error) => console.warn(`[loupe] ${error.message}`)),
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
  };
}
