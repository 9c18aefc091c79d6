import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Loupe, type FetchLike, type LoupeError } from '../../packages/sdk/src/index.js';
import { startListeningService, type ListeningService } from './sdk-server.js';

let service: ListeningService;
let baseId: number;
beforeAll(async () => {
  service = await startListeningService();
  const created = await service.call('POST', '/api/prompt', {
    name: 'support-agent',
    systemPrompt: 'You are the support agent of {company}.',
    humanPrompt: 'Customer asks: {question}',
  });
  expect(created.status).toBe(201);
  baseId = created.body.data.id;
  const next = await service.call('POST', `/api/prompt/${baseId}/versions`, {
    newVersion: '1.1.0',
    changes: { systemPrompt: 'You are the friendly support agent of {company}. Use {{braces}} sparingly.', isLatest: true },
  });
  expect(next.status).toBe(201);
});
afterAll(async () => {
  await service?.close();
});

function client() {
  const requests: string[] = [];
  const errors: LoupeError[] = [];
  const countingFetch: FetchLike = (url, init) => {
    requests.push(url);
    return fetch(url, init);
  };
  const loupe = new Loupe({
    apiKey: service.apiKey,
    baseUrl: service.baseUrl,
    fetch: countingFetch,
    env: {},
    onError: (e) => errors.push(e),
  });
  return { loupe, requests, errors };
}

describe('SDK prompts against the listening service', () => {
  it('fetches the latest version and a given version, and renders them', async () => {
    const { loupe } = client();
    const latest = await loupe.getPrompt('support-agent');
    expect(latest).toMatchObject({ name: 'support-agent', version: '1.1.0', isLatest: true, isFallback: false });
    expect(loupe.render(latest, { company: 'Acme', question: 'Where is my order?' }).messages).toEqual([
      { role: 'system', content: 'You are the friendly support agent of Acme. Use {braces} sparingly.' },
      { role: 'user', content: 'Customer asks: Where is my order?' },
    ]);
    const first = await loupe.getPrompt('support-agent', { version: '1.0.0' });
    expect(first).toMatchObject({ id: baseId, version: '1.0.0', isLatest: false });
    expect(loupe.render(first, { company: 'Acme', question: 'q' }).systemPrompt).toBe('You are the support agent of Acme.');
    await expect(loupe.getPrompt('no-such-prompt')).rejects.toMatchObject({ kind: 'prompt', details: { code: 'NOT_FOUND' } });
    await loupe.shutdown();
  });

  it('caches within the TTL: repeated calls make no request', async () => {
    const { loupe, requests } = client();
    await loupe.getPrompt('support-agent');
    await loupe.getPrompt('support-agent');
    await loupe.getPrompt('support-agent', { version: '1.0.0' });
    await loupe.getPrompt('support-agent', { version: '1.0.0' });
    expect(requests).toHaveLength(2);
    loupe.invalidatePrompts('support-agent');
    await loupe.getPrompt('support-agent');
    expect(requests).toHaveLength(3);
    await loupe.shutdown();
  });

  it('resolves by label, and a span started with the prompt is counted for that version', async () => {
    const moved = await fetch(`${service.baseUrl}/api/prompt/${baseId}/labels/production`, {
      method: 'PUT',
      headers: { 'x-api-key': service.apiKey },
    });
    expect(moved.status).toBe(200);
    const { loupe, requests } = client();
    const production = await loupe.prompts.get('support-agent', { label: 'production' });
    expect(production).toMatchObject({ id: baseId, version: '1.0.0', labels: ['production'], isFallback: false });
    expect(requests.at(-1)).toBe(`${service.baseUrl}/api/prompt/resolve?name=support-agent&label=production`);

    loupe.withSpan(
      'answer',
      { kind: 'llm.chat', prompt: production, metrics: { model: 'gpt-4o', totalTokens: 12, costUsd: 0.002, ttftMs: 30 } },
      () => 'ok',
    );
    const fallback = await loupe.prompts.get('not-there', { label: 'production', fallback: 'x' });
    loupe.startSpan('fallback', { kind: 'llm.chat', prompt: fallback }).end();
    await loupe.shutdown();

    const metrics = await service.call('GET', `/api/prompt/${baseId}/metrics`);
    expect(metrics.status).toBe(200);
    const byVersion = Object.fromEntries(metrics.body.data.versions.map((v: any) => [v.version, v]));
    expect(byVersion['1.0.0']).toMatchObject({ calls: 1, totalTokens: 12, errorCount: 0 });
    expect(byVersion['1.0.0'].costUsd).toBeCloseTo(0.002);
    expect(byVersion['1.0.0'].ttftMs.p50).toBe(30);
    expect(byVersion['1.1.0']).toMatchObject({ calls: 0 });
  });

  it('when the service is down: the cached copy is served stale, and an uncached prompt gets its fallback', async () => {
    const { loupe, errors } = client();
    const cached = await loupe.getPrompt('support-agent', { cacheTtlMs: 0 });
    await service.stopListening();

    // Stale (TTL 0) and the refresh fails: the last good copy is still served.
    const stale = await loupe.getPrompt('support-agent', { cacheTtlMs: 0 });
    expect(stale).toEqual(cached);
    const fallback = await loupe.getPrompt('onboarding', { fallback: 'Welcome the user to {product}.' });
    expect(fallback).toMatchObject({ name: 'onboarding', isFallback: true, systemPrompt: 'Welcome the user to {product}.' });
    expect(loupe.render(fallback, { product: 'Loupe' }).systemPrompt).toBe('Welcome the user to Loupe.');
    await expect(loupe.getPrompt('onboarding')).rejects.toMatchObject({ kind: 'prompt' });
    await new Promise((r) => setTimeout(r, 50));
    expect(errors.map((e) => e.kind)).toContain('prompt');
    expect(errors.some((e) => /no answer/.test(e.message))).toBe(true);
    await loupe.shutdown();
  });
});
