import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

// The default configuration: private targets refused.
let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

type Json = Record<string, any>;

async function call(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Json, who: Tenant = tenant) {
  const res = await ctx.app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<Json>() };
}

describe('webhook endpoints', () => {
  it('creates with a generated secret shown once, lists and deletes', async () => {
    const created = await call('POST', '/api/webhooks', { url: 'https://hooks.example.com/loupe', events: ['prompt.version.created'] });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      url: 'https://hooks.example.com/loupe',
      events: ['prompt.version.created'],
      status: 'active',
      workspaceId: tenant.workspaceId,
    });
    expect(created.body.data.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const listed = await call('GET', '/api/webhooks');
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0].secret).toBeUndefined();
    expect((await call('GET', `/api/webhooks/${created.body.data.id}`)).body.data.secret).toBeUndefined();
    const given = await call('POST', '/api/webhooks', {
      url: 'https://hooks.example.com/two',
      events: ['prompt.deleted'],
      secret: 'my-own-secret-0123456789',
    });
    expect(given.body.data.secret).toBe('my-own-secret-0123456789');

    expect((await call('GET', `/api/webhooks/${created.body.data.id}/deliveries`)).body).toMatchObject({ data: [], meta: { total: 0 } });
    expect((await call('DELETE', `/api/webhooks/${created.body.data.id}`)).status).toBe(200);
    expect((await call('GET', `/api/webhooks/${created.body.data.id}`)).status).toBe(404);
    expect((await call('DELETE', `/api/webhooks/${created.body.data.id}`)).status).toBe(404);
  });

  it('refuses loopback, private and link-local targets by default, and bad input, with the path', async () => {
    const before = (await call('GET', '/api/webhooks')).body.data.length;
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/hook',
      'http://192.168.0.10/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[fd00::1]/hook',
      // IPv6 forms that carry a private IPv4 address, Teredo, loopback names written otherwise
      'http://[::127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[2002:7f00:1::]/',
      'http://[2002:a9fe:a9fe::]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[64:ff9b:1::7f00:1]/',
      'http://[2001::1]/',
      'http://localhost./',
      'http://LOCALHOST../',
      'http://hooks.Localhost/',
      // IPv4 written short, in decimal, octal, hex or zero-padded
      'http://127.1/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://0x7f.0.0.1/',
      'http://127.000.000.001/',
    ]) {
      const res = await call('POST', '/api/webhooks', { url, events: ['prompt.deleted'] });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code, url).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.issues[0].path, url).toBe('body.url');
      expect(res.body.error.details.issues[0].message, url).toMatch(/^must not be a loopback.*LOUPE_WEBHOOK_ALLOW_PRIVATE=true to allow/);
      expect(res.body.error.message, url).toMatch(/^url must not be a loopback/);
    }
    expect((await call('GET', '/api/webhooks')).body.data).toHaveLength(before);
    for (const url of ['http://[2606:4700::1111]/hook', 'http://[64:ff9b::808:808]/hook', 'http://93.184.216.34/hook']) {
      expect((await call('POST', '/api/webhooks', { url, events: ['prompt.deleted'] })).status, url).toBe(201);
    }
    const bad = [
      { url: 'ftp://example.com/x', events: ['prompt.deleted'] },
      { url: 'https://user:pw@example.com/x', events: ['prompt.deleted'] },
      { url: 'https://example.com/x', events: [] },
      { url: 'https://example.com/x', events: ['prompt.renamed'] },
      { url: 'https://example.com/x', events: ['prompt.deleted', 'prompt.deleted'] },
      { url: 'https://example.com/x', events: ['prompt.deleted'], secret: 'short' },
    ];
    for (const body of bad) {
      const res = await call('POST', '/api/webhooks', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await call('GET', '/api/webhooks/not-a-uuid')).status).toBe(400);
  });

  it('another workspace cannot see, delete or read the deliveries of an endpoint, nor receive its events', async () => {
    const created = await call('POST', '/api/webhooks', { url: 'https://hooks.example.com/private', events: ['prompt.version.created'] });
    const id = created.body.data.id;
    expect((await call('GET', '/api/webhooks', undefined, other)).body.data).toEqual([]);
    expect((await call('GET', `/api/webhooks/${id}`, undefined, other)).status).toBe(404);
    expect((await call('GET', `/api/webhooks/${id}/deliveries`, undefined, other)).status).toBe(404);
    expect((await call('DELETE', `/api/webhooks/${id}`, undefined, other)).status).toBe(404);
    // A change in the other workspace makes no delivery for this workspace's endpoint.
    await call('POST', '/api/prompt', { name: 'elsewhere', systemPrompt: 'x' }, other);
    expect((await call('GET', `/api/webhooks/${id}/deliveries`)).body.data).toEqual([]);
    await call('POST', '/api/prompt', { name: 'here', systemPrompt: 'x' });
    expect((await call('GET', `/api/webhooks/${id}/deliveries`)).body.data).toMatchObject([
      { eventType: 'prompt.version.created', status: 'pending', attempts: 0 },
    ]);
  });

  it('the OpenAPI document describes the new routes with their errors', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json<Json>();
    for (const [path, method] of [
      ['/api/webhooks/', 'post'],
      ['/api/webhooks/{id}/deliveries', 'get'],
      ['/api/prompt/{id}/labels/{label}', 'put'],
      ['/api/prompt/{id}/labels/{label}', 'delete'],
      ['/api/prompt/{id}/label-history', 'get'],
      ['/api/prompt/resolve', 'get'],
      ['/api/prompt/{id}/diff', 'get'],
      ['/api/prompt/{id}/metrics', 'get'],
    ] as const) {
      const op = doc.paths[path]?.[method] ?? doc.paths[path.replace(/\/$/, '')]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(Object.keys(op.responses)).toEqual(
        expect.arrayContaining(['200', '400', '401', '404'].filter((s) => !(method === 'post' && s === '200'))),
      );
    }
  });
});
