import { renderTemplate } from './contract/index.js';
import { LoupeError } from './errors.js';
import { httpError, request } from './http.js';
import type { ResolvedOptions } from './options.js';
import type { PromptRecord } from './types.js';

export interface Prompt extends PromptRecord {
  /** true when this is the caller's fallback, not a record of the service. */
  isFallback: boolean;
}

export interface GetPromptOptions {
  /** A version string (1.2.0); default: the latest version. */
  version?: string;
  /** A label (production, staging, …): the version it points at now. "latest" is the latest version. */
  label?: string;
  /** Cache time-to-live for this call; default the client's promptCacheTtlMs. */
  cacheTtlMs?: number;
  /** Served when the prompt cannot be fetched and none is cached: a system prompt text or a record. */
  fallback?: string | (Partial<PromptRecord> & { systemPrompt: string });
}

interface CacheEntry {
  prompt: Prompt;
  fetchedAt: number;
  refreshing?: Promise<unknown>;
}

/**
 * GET /api/prompt/resolve (by label, version or latest: one indexed lookup) with an in-memory
 * cache: fresh entries served, stale ones served while one refresh runs, the fallback or the
 * stale copy when the service cannot be reached. A label's entry is refreshed like any other,
 * so a moved label reaches the application within one cache lifetime.
 */
export class PromptClient {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<Prompt>>();

  constructor(private readonly options: ResolvedOptions) {}

  async get(name: string, opts: GetPromptOptions = {}): Promise<Prompt> {
    if (opts.label !== undefined && opts.version !== undefined) {
      throw new LoupeError('prompt', `Prompt ${name}: give a label or a version, not both`);
    }
    const which: Which = opts.label !== undefined ? { label: opts.label } : opts.version !== undefined ? { version: opts.version } : {};
    const key = `${name}\u0000${opts.version ?? ''}\u0000${opts.label ?? ''}`;
    const ttl = opts.cacheTtlMs ?? this.options.promptCacheTtlMs;
    const entry = this.cache.get(key);
    if (entry) {
      if (Date.now() - entry.fetchedAt >= ttl && !entry.refreshing) {
        entry.refreshing = this.load(key, name, which)
          .catch((error: unknown) => this.options.onError(asPromptError(name, error)))
          .finally(() => {
            entry.refreshing = undefined;
          });
      }
      return entry.prompt;
    }
    try {
      return await this.load(key, name, which);
    } catch (error) {
      if (opts.fallback === undefined) throw asPromptError(name, error);
      this.options.onError(asPromptError(name, error));
      return fallbackPrompt(name, opts);
    }
  }

  /** Forgets cached prompts (all, or one name). */
  invalidate(name?: string): void {
    for (const key of this.cache.keys()) if (name === undefined || key.startsWith(`${name}\u0000`)) this.cache.delete(key);
  }

  /** One fetch per key at a time; concurrent callers share it. */
  private load(key: string, name: string, which: Which): Promise<Prompt> {
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetchPrompt(name, which)
        .then((record) => {
          const prompt: Prompt = { ...record, isFallback: false };
          this.cache.set(key, { prompt, fetchedAt: Date.now() });
          return prompt;
        })
        .finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async fetchPrompt(name: string, which: Which): Promise<PromptRecord> {
    const query = new URLSearchParams({ name });
    if (which.label !== undefined) query.set('label', which.label);
    if (which.version !== undefined) query.set('version', which.version);
    const path = `/api/prompt/resolve?${query}`;
    const answer = await request(this.options, 'GET', path);
    if (answer.status === 404) {
      const what = which.label !== undefined ? ` label ${which.label}` : which.version !== undefined ? ` version ${which.version}` : '';
      throw new LoupeError('prompt', `No prompt ${name}${what}`, { status: 404, code: 'NOT_FOUND' });
    }
    if (answer.status !== 200) throw httpError('GET', path, answer);
    const record = (answer.body as { data?: PromptRecord } | undefined)?.data;
    if (!record || typeof record !== 'object' || record.name !== name)
      throw new LoupeError('prompt', `GET ${path} answered no prompt record`);
    return record;
  }
}

type Which = { label?: string; version?: string };

function asPromptError(name: string, error: unknown): LoupeError {
  if (error instanceof LoupeError && error.kind === 'prompt') return error;
  const message = error instanceof Error ? error.message : String(error);
  const details = error instanceof LoupeError ? error.details : { cause: error };
  return new LoupeError('prompt', `Prompt ${name} could not be fetched: ${message}`, details);
}

function fallbackPrompt(name: string, opts: GetPromptOptions): Prompt {
  const given = typeof opts.fallback === 'string' ? { systemPrompt: opts.fallback } : opts.fallback!;
  return {
    id: 0,
    name,
    version: opts.version ?? '0.0.0',
    promptGroupId: '',
    isLatest: false,
    labels: [],
    humanPrompt: null,
    rawPrompt: null,
    description: null,
    metadata: {},
    outputSchema: null,
    ...given,
    isFallback: true,
  };
}

export interface RenderedPrompt {
  systemPrompt: string;
  humanPrompt: string | undefined;
  /** Ready for a chat model: the system message, then the human message when there is one. */
  messages: Array<{ role: 'system' | 'user'; content: string }>;
}

/** Fills a prompt's system and human templates together; missing variables of both are named at once. */
export function render(
  prompt: Pick<PromptRecord, 'systemPrompt' | 'humanPrompt'>,
  variables: Record<string, unknown> = {},
): RenderedPrompt {
  const human = prompt.humanPrompt ?? undefined;
  const system = renderTemplate(prompt.systemPrompt, variables);
  const user = human === undefined ? undefined : renderTemplate(human, variables);
  // The renderer reports what is missing (as the server's render does); here that is an error,
  // because an application sending a half-filled prompt to a model is a bug.
  const missing = [...new Set([...system.missing, ...(user?.missing ?? [])])];
  if (missing.length > 0) throw new LoupeError('prompt', `Missing prompt variable(s): ${missing.join(', ')}`, { missing });
  const systemPrompt = system.text;
  const humanPrompt = user?.text;
  return {
    systemPrompt,
    humanPrompt,
    messages: [{ role: 'system', content: systemPrompt }, ...(humanPrompt ? [{ role: 'user' as const, content: humanPrompt }] : [])],
  };
}
