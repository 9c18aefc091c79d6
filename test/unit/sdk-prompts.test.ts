import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Loupe, LoupeError, render, renderTemplate, type PromptRecord } from '../../packages/sdk/src/index.js';
import { fakeFetch, json, type Responder } from './sdk-fake-service.js';

const record = (version: string, isLatest: boolean, systemPrompt = `You are v${version}. Help {user}.`): PromptRecord => ({
  id: Number(version.replace(/\./g, '')),
  name: 'support',
  version,
  promptGroupId: '6f1c1d7e-0000-4000-8000-000000000001',
  isLatest,
  systemPrompt,
  humanPrompt: 'Question: {question}',
  rawPrompt: null,
  description: '',
  metadata: {},
  outputSchema: null,
});

function client(responder: Responder) {
  const service = fakeFetch(responder);
  const errors: LoupeError[] = [];
  const loupe = new Loupe({
    apiKey: 'lpk_test',
    baseUrl: 'http://loupe.test',
    fetch: service.fetch,
    env: {},
    onError: (e) => errors.push(e),
  });
  return { loupe, errors, ...service };
}

/** GET /api/prompt/resolve as the service answers it: the one record, or 404. */
const resolveFrom = (records: PromptRecord[]) => (url: string) => {
  const q = new URL(url).searchParams;
  const found = records.find(
    (r) =>
      r.name === q.get('name') &&
      (q.has('label') ? (r.labels ?? []).includes(q.get('label')!) : q.has('version') ? r.version === q.get('version') : r.isLatest),
  );
  return found ? json(200, { data: found, meta: {} }) : json(404, { error: { code: 'NOT_FOUND', message: 'none' }, meta: {} });
};
const recordAnswer = (r: PromptRecord) => json(200, { data: r, meta: {} });

describe('SDK prompts', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('getPrompt(name) resolves the latest version; {version} and {label} resolve those, each one request', async () => {
    const all = [
      { ...record('1.1.0', true), labels: ['latest', 'staging'] },
      { ...record('1.0.0', false), labels: ['production'] },
    ];
    const { loupe, calls } = client((call) => resolveFrom(all)(call.url));
    const latest = await loupe.getPrompt('support');
    expect(latest).toMatchObject({ version: '1.1.0', isLatest: true, isFallback: false });
    expect(calls[0]!.url).toBe('http://loupe.test/api/prompt/resolve?name=support');
    expect(calls[0]!.headers['x-api-key']).toBe('lpk_test');
    const old = await loupe.getPrompt('support', { version: '1.0.0' });
    expect(old.version).toBe('1.0.0');
    expect(calls[1]!.url).toBe('http://loupe.test/api/prompt/resolve?name=support&version=1.0.0');
    const production = await loupe.prompts.get('support', { label: 'production' });
    expect(production).toMatchObject({ version: '1.0.0', labels: ['production'] });
    expect(calls[2]!.url).toBe('http://loupe.test/api/prompt/resolve?name=support&label=production');
    // Cached per label: a second call makes no request.
    await loupe.prompts.get('support', { label: 'production' });
    expect(calls).toHaveLength(3);
    await expect(loupe.getPrompt('support', { version: '9.9.9' })).rejects.toMatchObject({
      kind: 'prompt',
      details: { code: 'NOT_FOUND' },
    });
    await expect(loupe.prompts.get('support', { label: 'canary' })).rejects.toMatchObject({ kind: 'prompt', details: { status: 404 } });
    await expect(loupe.prompts.get('support', { label: 'canary', version: '1.0.0' })).rejects.toBeInstanceOf(LoupeError);
    await loupe.shutdown();
  });

  it('a moved label reaches the application after the cache lifetime, served stale meanwhile', async () => {
    const records = [record('1.1.0', true), record('1.0.0', false)];
    let holder = '1.0.0';
    const { loupe, calls } = client((call) =>
      resolveFrom(records.map((r) => ({ ...r, labels: r.version === holder ? ['production'] : [] })))(call.url),
    );
    expect((await loupe.prompts.get('support', { label: 'production' })).version).toBe('1.0.0');
    holder = '1.1.0';
    await vi.advanceTimersByTimeAsync(60_000);
    expect((await loupe.prompts.get('support', { label: 'production' })).version).toBe('1.0.0'); // stale, refresh started
    await vi.advanceTimersByTimeAsync(0);
    expect((await loupe.prompts.get('support', { label: 'production' })).version).toBe('1.1.0');
    expect(calls).toHaveLength(2);
    await loupe.shutdown();
  });

  it('serves the fallback for a label when the service is down', async () => {
    const { loupe, errors } = client(() => {
      throw new TypeError('connect ECONNREFUSED');
    });
    const fallback = await loupe.prompts.get('support', { label: 'production', fallback: 'Be helpful.' });
    expect(fallback).toMatchObject({ name: 'support', systemPrompt: 'Be helpful.', isFallback: true, labels: [] });
    expect(errors).toHaveLength(1);
    await loupe.shutdown();
  });

  it('caches for the TTL, then serves stale while exactly one background refresh runs', async () => {
    let version = '1.0.0';
    let release: (() => void) | undefined;
    const { loupe, calls } = client(async () => {
      if (release === undefined && calls.length > 1) await new Promise<void>((r) => (release = r));
      return recordAnswer(record(version, true));
    });
    expect((await loupe.getPrompt('support')).version).toBe('1.0.0');
    await vi.advanceTimersByTimeAsync(59_000);
    expect((await loupe.getPrompt('support')).version).toBe('1.0.0');
    expect(calls).toHaveLength(1);

    version = '1.1.0';
    await vi.advanceTimersByTimeAsync(1_000);
    // Stale: answered at once from the cache, refresh started in the background (held open).
    const stale = await Promise.all([loupe.getPrompt('support'), loupe.getPrompt('support'), loupe.getPrompt('support')]);
    expect(stale.map((p) => p.version)).toEqual(['1.0.0', '1.0.0', '1.0.0']);
    expect(calls).toHaveLength(2);
    release!();
    await vi.advanceTimersByTimeAsync(0);
    expect((await loupe.getPrompt('support')).version).toBe('1.1.0');
    expect(calls).toHaveLength(2);
    await loupe.shutdown();
  });

  it('concurrent first fetches share one request', async () => {
    const { loupe, calls } = client(() => recordAnswer(record('1.0.0', true)));
    await Promise.all([loupe.getPrompt('support'), loupe.getPrompt('support')]);
    expect(calls).toHaveLength(1);
    await loupe.shutdown();
  });

  it('serves the fallback when the service is down and nothing is cached; keeps a stale copy when a refresh fails', async () => {
    let down = true;
    const { loupe, errors } = client(() => {
      if (down) throw new TypeError('connect ECONNREFUSED');
      return recordAnswer(record('1.0.0', true));
    });
    const fallback = await loupe.getPrompt('support', { fallback: 'You are a helpful assistant.' });
    expect(fallback).toMatchObject({ name: 'support', systemPrompt: 'You are a helpful assistant.', isFallback: true });
    expect(errors[0]).toMatchObject({ kind: 'prompt' });
    await expect(loupe.getPrompt('support')).rejects.toBeInstanceOf(LoupeError);

    down = false;
    expect((await loupe.getPrompt('support')).isFallback).toBe(false);
    down = true;
    await vi.advanceTimersByTimeAsync(61_000);
    const stale = await loupe.getPrompt('support', { fallback: 'unused' });
    expect(stale).toMatchObject({ version: '1.0.0', isFallback: false });
    await vi.advanceTimersByTimeAsync(0);
    expect(errors.length).toBe(2); // the failed background refresh, reported
    await loupe.shutdown();
  });

  it('an error answer (401) is an error, with the fallback served when given', async () => {
    const { loupe } = client(() => json(401, { error: { code: 'UNAUTHORIZED', message: 'unknown key' } }));
    await expect(loupe.getPrompt('support')).rejects.toMatchObject({ kind: 'prompt', details: { status: 401, code: 'UNAUTHORIZED' } });
    await expect(loupe.getPrompt('support', { fallback: { systemPrompt: 'x', humanPrompt: 'y {q}' } })).resolves.toMatchObject({
      humanPrompt: 'y {q}',
      isFallback: true,
    });
    await loupe.shutdown();
  });
});

describe('SDK render', () => {
  it('fills {placeholders}; {{ and }} are literal braces', () => {
    expect(renderTemplate('Hi {name}, {{name}} is literal; JSON {{"a": {n}}}', { name: 'Ann', n: 1 }).text).toBe(
      'Hi Ann, {name} is literal; JSON {"a": 1}',
    );
    expect(renderTemplate('{ not a placeholder } {x}', { x: { a: 1 } }).text).toBe('{ not a placeholder } {"a":1}');
  });

  it('renders system and human templates into messages and names every missing variable', () => {
    const prompt = record('1.0.0', true);
    expect(render(prompt, { user: 'Ann', question: 'Why?' })).toEqual({
      systemPrompt: 'You are v1.0.0. Help Ann.',
      humanPrompt: 'Question: Why?',
      messages: [
        { role: 'system', content: 'You are v1.0.0. Help Ann.' },
        { role: 'user', content: 'Question: Why?' },
      ],
    });
    expect(() => render(prompt, {})).toThrow(/user, question/);
    expect(() => render(prompt, { user: 'x' })).toThrow(expect.objectContaining({ details: { missing: ['question'] } }));
  });
});
