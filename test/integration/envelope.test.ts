import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

let ctx: TestContext;
let tenant: Tenant;

// Routes that exist only in this test app: one that validates a body, one that throws.
const probeRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post('/probe/echo', {
    schema: { body: z.object({ name: z.string().min(1), items: z.array(z.object({ n: z.number() })) }) },
    handler: async (request) => ({ data: request.body, meta: { requestId: request.id } }),
  });
  app.get('/probe/boom', async () => {
    throw new Error('secret internal detail: SELECT * FROM api_keys');
  });
};

beforeAll(async () => {
  ctx = await createTestContext({ env: { LOUPE_BODY_LIMIT: '65536' } });
  await ctx.app.register(probeRoutes);
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

function expectError(res: { statusCode: number; json(): any; headers: Record<string, unknown> }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  const body = res.json();
  expect(body).toEqual({
    error: { code, message: expect.any(String), details: expect.any(Object) },
    meta: { requestId: expect.any(String) },
  });
  expect(res.headers['x-request-id']).toBe(body.meta.requestId);
  return body;
}

describe('success envelope and request id', () => {
  it('wraps data with meta.requestId and meta.timestamp, and keeps a sane incoming id', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123.trace:9' } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.meta.requestId).toBe('abc-123.trace:9');
    expect(new Date(body.meta.timestamp).toISOString()).toBe(body.meta.timestamp);
    expect(res.headers['x-request-id']).toBe('abc-123.trace:9');
  });

  it('replaces an incoming id that is not sane', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\u0007<script>' } });
    expect(res.json().meta.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('carries security headers', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });
});

describe('error envelope', () => {
  it('400 names the path of every bad field', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/probe/echo', payload: { name: '', items: [{ n: 'x' }, { n: 1 }, {}] } });
    const body = expectError(res, 400, 'VALIDATION_ERROR');
    const paths = body.error.details.issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual(['body.items.0.n', 'body.items.2.n', 'body.name']);
  });

  it('400 for malformed JSON', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/probe/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    const body = expectError(res, 400, 'VALIDATION_ERROR');
    expect(body.error.message).toMatch(/not valid JSON/);
  });

  it('401 without credentials on an API route', async () => {
    const body = expectError(await ctx.app.inject({ method: 'GET', url: '/api/me' }), 401, 'UNAUTHORIZED');
    expect(body.error.details.reason).toBe('missing_credentials');
  });

  it('401 for an unknown key, without echoing it', async () => {
    const key = 'lpk_000000000000_notARealKeyAtAllnotARealKeyAtAll0000';
    const res = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': key } });
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.body).not.toContain(key);
  });

  it('404 for an unknown route and for an unknown method', async () => {
    expectError(await ctx.app.inject({ method: 'GET', url: '/nope' }), 404, 'NOT_FOUND');
    expectError(await ctx.app.inject({ method: 'PUT', url: '/healthz' }), 404, 'NOT_FOUND');
  });

  it('413 for a body over the limit', async () => {
    const payload = JSON.stringify({ name: 'x'.repeat(70_000), items: [] });
    const res = await ctx.app.inject({ method: 'POST', url: '/probe/echo', headers: { 'content-type': 'application/json' }, payload });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('413 for a gzip bomb: small on the wire, over the limit inflated', async () => {
    const inflated = JSON.stringify({ name: 'y'.repeat(5_000_000), items: [] });
    const payload = gzipSync(inflated);
    expect(payload.length).toBeLessThan(65_536);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/probe/echo',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload,
    });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('accepts a gzip body within the limit', async () => {
    const payload = gzipSync(JSON.stringify({ name: 'zipped', items: [{ n: 1 }] }));
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/probe/echo',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ name: 'zipped', items: [{ n: 1 }] });
  });

  it('400 for a body that claims gzip but is not', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/probe/echo',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: '{"name":"plain"}',
    });
    expectError(res, 400, 'VALIDATION_ERROR');
  });

  it('415 for an unsupported content type or encoding', async () => {
    expectError(
      await ctx.app.inject({ method: 'POST', url: '/probe/echo', headers: { 'content-type': 'text/csv' }, payload: 'a,b' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await ctx.app.inject({
        method: 'POST',
        url: '/probe/echo',
        headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
        payload: '{}',
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('500 hides internals and keeps the request id', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/probe/boom', headers: { 'x-request-id': 'req-500' } });
    const body = expectError(res, 500, 'INTERNAL_ERROR');
    expect(body.error.message).toBe('Internal server error');
    expect(body.meta.requestId).toBe('req-500');
    expect(res.body).not.toMatch(/secret|SELECT|api_keys|at .*\.ts/);
  });

  it('authenticated routes resolve the workspace', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: tenant.headers });
    expect(res.statusCode).toBe(200);
  });
});

describe('OpenAPI', () => {
  it('serves a document generated from the route schemas, without auth', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/api/me', '/api/admin/organizations']));
    expect(doc.paths['/api/admin/organizations'].post.requestBody).toBeDefined();
  });

  it('renders /docs', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});
