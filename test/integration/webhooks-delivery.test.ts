import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { startReceiver, type Answer, type ReceivedRequest, type WebhookReceiver } from '../support/webhook-receiver.js';
import { createWebhookWorker, type WebhookWorkerOptions } from '../../src/prompts/service/webhook-worker.js';
import { verifySignature } from '../../src/prompts/model/webhook-signature.js';
import { createTargetGuard } from '../../src/egress/target-guard.js';

let ctx: TestContext;
let tenant: Tenant;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  ctx = await createTestContext({ env: { LOUPE_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  tenant = await ctx.tenant();
});
afterEach(async () => {
  // Each test starts from an empty outbox and no endpoints.
  await ctx.sql`delete from webhooks`;
  await ctx.sql`delete from webhook_events`;
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(async () => {
  await ctx?.close();
});

type Json = Record<string, any>;
const SECRET = 'test-secret-0123456789abcdef';

async function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: Json) {
  const res = await ctx.app.inject({ method, url, headers: tenant.headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<Json>() };
}

async function receiver(answer?: (index: number, request: ReceivedRequest) => Answer) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function subscribe(url: string, events = ['prompt.version.created', 'prompt.label.moved', 'prompt.deleted']) {
  const res = await call('POST', '/api/webhooks', { url, events, secret: SECRET });
  expect(res.status).toBe(201);
  return res.body.data as Json;
}

const guard = (allowPrivate: boolean) => createTargetGuard({ allowPrivate, allowSetting: 'LOUPE_WEBHOOK_ALLOW_PRIVATE' });

/** A worker as a test drives it: fast retries, short timeouts, driven by runOnce. */
const worker = (options: Partial<WebhookWorkerOptions> = {}) =>
  createWebhookWorker({
    sql: ctx.sql,
    guard: guard(true),
    retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 100 },
    timeoutMs: 2_000,
    ...options,
  });

/** Runs the worker until `done` holds (retries become due after their short backoff). */
async function deliverUntil(w: ReturnType<typeof worker>, done: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('deliveries did not settle');
    await w.runOnce();
    await new Promise((r) => setTimeout(r, 25));
  }
}

const deliveries = async (webhookId: string) => (await call('GET', `/api/webhooks/${webhookId}/deliveries`)).body.data as Json[];

describe('webhook delivery', () => {
  it('POSTs the event to the receiver with a valid signature and an idempotency key', async () => {
    const r = await receiver();
    const hook = await subscribe(r.url);
    const created = await call('POST', '/api/prompt', { name: 'hooked', systemPrompt: 'hi {name}' });
    expect(created.status).toBe(201);
    expect(await worker({ now: () => Date.now() }).runOnce()).toBe(1);

    expect(r.received).toHaveLength(1);
    const [req] = r.received;
    const event = JSON.parse(req!.body);
    expect(event).toEqual({
      id: expect.any(String),
      type: 'prompt.version.created',
      createdAt: expect.any(String),
      workspaceId: tenant.workspaceId,
      data: {
        id: created.body.data.id,
        name: 'hooked',
        version: '1.0.0',
        promptGroupId: created.body.data.promptGroupId,
        isLatest: true,
        labels: ['latest'],
      },
    });
    expect(req!.headers['idempotency-key']).toBe(event.id);
    expect(req!.headers['x-loupe-event']).toBe('prompt.version.created');
    const signature = String(req!.headers['x-loupe-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(SECRET, req!.body, signature, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verifySignature('another-secret-0123456789', req!.body, signature, Math.floor(Date.now() / 1000))).toBe(false);
    expect(verifySignature(SECRET, req!.body.replace('hooked', 'hacked'), signature, Math.floor(Date.now() / 1000))).toBe(false);

    const [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({
      eventId: event.id,
      eventType: 'prompt.version.created',
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
      nextAttemptAt: null,
    });
  });

  it('announces label moves and deletions, only to endpoints subscribed to them', async () => {
    const labels = await receiver();
    const all = await receiver();
    await subscribe(labels.url, ['prompt.label.moved']);
    await subscribe(all.url);
    const created = await call('POST', '/api/prompt', { name: 'hooked-labels', systemPrompt: 'x' });
    await call('PUT', `/api/prompt/${created.body.data.id}/labels/production`);
    await call('DELETE', `/api/prompt/${created.body.data.id}`);
    await worker().runOnce();
    expect(labels.received.map((q) => JSON.parse(q.body).type)).toEqual(['prompt.label.moved']);
    expect(JSON.parse(labels.received[0]!.body).data).toMatchObject({
      name: 'hooked-labels',
      label: 'production',
      from: null,
      to: { promptId: created.body.data.id, version: '1.0.0' },
    });
    expect(all.received.map((q) => JSON.parse(q.body).type).sort()).toEqual([
      'prompt.deleted',
      'prompt.label.moved',
      'prompt.version.created',
    ]);
  });

  it('retries after the receiver fails, with backoff, and records each attempt', async () => {
    const r = await receiver((i) => (i < 2 ? { status: 500, body: 'boom' } : { status: 204 }));
    const hook = await subscribe(r.url);
    await call('POST', '/api/prompt', { name: 'hooked-retry', systemPrompt: 'x' });
    const w = worker({ retry: { maxAttempts: 4, baseDelayMs: 300, maxDelayMs: 1_000 } });
    await w.runOnce();
    const [first] = await deliveries(hook.id);
    expect(first).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, lastResponseExcerpt: 'boom' });
    expect(Date.parse(first!.nextAttemptAt)).toBeGreaterThan(Date.parse(first!.lastAttemptAt));
    await deliverUntil(w, async () => (await deliveries(hook.id))[0]!.status === 'delivered');
    expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 204 });
    expect(r.received).toHaveLength(3);
    // Every attempt carries the same event and idempotency key.
    expect(new Set(r.received.map((q) => q.headers['idempotency-key'])).size).toBe(1);
    expect((await call('GET', `/api/webhooks/${hook.id}`)).body.data).toMatchObject({ status: 'active', consecutiveFailures: 0 });
  });

  it('gives up after the last attempt and marks the endpoint failing; keeps only an excerpt of the answer', async () => {
    const r = await receiver(() => ({ status: 503, body: 'x'.repeat(5_000) }));
    const hook = await subscribe(r.url);
    await call('POST', '/api/prompt', { name: 'hooked-fail', systemPrompt: 'x' });
    const w = worker({ retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40 }, failingAfter: 2 });
    await deliverUntil(w, async () => (await deliveries(hook.id))[0]!.status === 'failed');
    const [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 503, nextAttemptAt: null });
    expect(delivery!.lastResponseExcerpt.length).toBeLessThanOrEqual(512);
    expect(r.received).toHaveLength(3);
    expect((await call('GET', `/api/webhooks/${hook.id}`)).body.data).toMatchObject({ status: 'failing', consecutiveFailures: 3 });
    await w.runOnce();
    expect(r.received).toHaveLength(3);
  });

  it('never delivers twice what a receiver answered 2xx to, even with several workers', async () => {
    const r = await receiver();
    const hook = await subscribe(r.url);
    const first = await call('POST', '/api/prompt', { name: 'hooked-once', systemPrompt: 'x' });
    for (let i = 1; i <= 9; i += 1) await call('PATCH', `/api/prompt/${first.body.data.id}`, { description: `edit ${i}` });
    const workers = [worker(), worker(), worker()];
    await Promise.all(workers.map((w) => w.runOnce()));
    await Promise.all(workers.map((w) => w.runOnce()));
    expect(r.received).toHaveLength(10);
    expect(new Set(r.received.map((q) => JSON.parse(q.body).id)).size).toBe(10);
    expect((await deliveries(hook.id)).every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
  });

  it('delivers a change committed while no worker ran (the service was down) once one starts', async () => {
    const r = await receiver();
    await subscribe(r.url);
    await call('POST', '/api/prompt', { name: 'hooked-later', systemPrompt: 'x' });
    expect(r.received).toHaveLength(0);
    const w = worker({ pollIntervalMs: 20 });
    w.start();
    await r.waitFor(1);
    await w.stop();
    expect(JSON.parse(r.received[0]!.body).data.name).toBe('hooked-later');
  });

  it('does not follow redirects and bounds a receiver that never answers', async () => {
    const target = await receiver();
    const redirecting = await receiver(() => ({ status: 307, headers: { location: target.url } }));
    const silent = await receiver(() => 'hang');
    const redirectHook = await subscribe(redirecting.url);
    const silentHook = await subscribe(silent.url);
    await call('POST', '/api/prompt', { name: 'hooked-odd', systemPrompt: 'x' });
    const started = Date.now();
    await worker({ timeoutMs: 300, retry: { maxAttempts: 4, baseDelayMs: 60_000, maxDelayMs: 60_000 } }).runOnce();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(target.received).toHaveLength(0);
    expect((await deliveries(redirectHook.id))[0]).toMatchObject({
      status: 'pending',
      lastStatusCode: 307,
      lastError: 'redirects are not followed',
    });
    expect((await deliveries(silentHook.id))[0]).toMatchObject({
      status: 'pending',
      lastStatusCode: null,
      lastError: 'timed out after 300 ms',
    });
  });

  it('refuses private targets at delivery unless allowed, also when a name resolves to one, never naming the address', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    // Stored as if created while private targets were allowed; the worker of this replica refuses them.
    const targets = [
      r.url,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://localhost:${port}/hook`,
      `http://localhost.:${port}/hook`,
      // A name outside the loopback names that resolves to this machine: only the lookup sees it.
      `http://${hostname()}:${port}/hook`,
    ];
    const hooks = [];
    for (const url of targets) {
      const [hook] = await ctx.sql<{ id: string }[]>`
        insert into webhooks (workspace_id, url, events, secret) values (${tenant.workspaceId}, ${url}, ${['prompt.version.created']}, ${SECRET}) returning id`;
      hooks.push(hook!);
    }
    await call('POST', '/api/prompt', { name: 'hooked-private', systemPrompt: 'x' });
    await worker({ guard: guard(false), retry: { maxAttempts: 4, baseDelayMs: 60_000, maxDelayMs: 60_000 } }).runOnce();
    expect(r.received).toHaveLength(0);
    for (const [i, hook] of hooks.entries()) {
      const answer = await call('GET', `/api/webhooks/${hook.id}/deliveries`);
      const [delivery] = answer.body.data as Json[];
      expect(delivery, targets[i]).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
      expect(delivery!.lastError, targets[i]).toBe('refused: the address is private');
      expect(JSON.stringify(answer.body), targets[i]).not.toMatch(/127\.0\.|::1\b|7f00/);
    }
  });

  it('a connection that fails after a lookup says why without the address the name resolved to', async () => {
    // A port nothing listens on, reached by name while private targets are allowed.
    const closed = await receiver();
    const port = new URL(closed.url).port;
    await closed.close();
    const hook = await subscribe(`http://localhost:${port}/hook`);
    await call('POST', '/api/prompt', { name: 'hooked-closed', systemPrompt: 'x' });
    await worker({ retry: { maxAttempts: 4, baseDelayMs: 60_000, maxDelayMs: 60_000 } }).runOnce();
    const answer = await call('GET', `/api/webhooks/${hook.id}/deliveries`);
    expect(answer.body.data[0]).toMatchObject({ status: 'pending', attempts: 1, lastError: 'connection refused (ECONNREFUSED)' });
    expect(JSON.stringify(answer.body)).not.toMatch(/127\.0\.0\.1|::1\b/);
  });
});
