import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connectPostgres } from '../../src/stores/postgres.js';
import { createTestContext, type TestContext } from '../support/app.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

describe('GET /healthz', () => {
  it('answers 200 when both stores answer', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      data: { status: 'ok', postgres: 'ok', clickhouse: 'ok', ingest: 'ok' },
      meta: { requestId: expect.any(String) },
    });
  });
});

describe('GET /api/me', () => {
  it('resolves a workspace key to its workspace', async () => {
    const tenant = await ctx.tenant();
    const res = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: tenant.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ workspaceId: tenant.workspaceId, organizationId: tenant.organizationId, plan: 'pro' });
  });
});

describe('GET /healthz when a store does not answer', () => {
  it('answers within a second, 503, naming the store that does not answer', async () => {
    // A PostgreSQL that accepts connections and never answers (a hung server): the check is bounded.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const hung = connectPostgres(`postgres://loupe:loupe@127.0.0.1:${port}/loupe`, { max: 1 });
    const app = await buildApp({ config: ctx.config, sql: hung, clickhouse: ctx.clickhouse, consoleDir: false });
    try {
      const started = Date.now();
      const res = await app.inject({ method: 'GET', url: '/healthz' });
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json().error.details).toMatchObject({
        status: 'unavailable',
        postgres: 'unavailable',
        clickhouse: 'ok',
        ingest: 'ok',
        reasons: ['postgres: no answer within 600 ms'],
      });
    } finally {
      await app.close();
      await hung.end({ timeout: 0 });
      silent.close();
    }
  });

  it('answers 503 at once while the embedded PostgreSQL is known to be restarting, and API requests too', async () => {
    const outage = {
      reason: 'postgres: the embedded PostgreSQL stopped (signal SIGKILL); restarting it (attempt 1 of 6)',
      retryAfterSeconds: 3,
    };
    const app = await buildApp({
      config: ctx.config,
      sql: ctx.sql,
      clickhouse: ctx.clickhouse,
      consoleDir: false,
      postgresOutage: () => outage,
    });
    try {
      const health = await app.inject({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(503);
      expect(health.headers['retry-after']).toBe('3');
      expect(health.json().error.details).toMatchObject({ status: 'unavailable', postgres: 'unavailable', reasons: [outage.reason] });
      const tenant = await ctx.tenant();
      const me = await app.inject({ method: 'GET', url: '/api/me', headers: tenant.headers });
      expect(me.statusCode).toBe(503);
      expect(me.headers['retry-after']).toBe('3');
      expect(me.json().error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: outage.reason } });
      // What needs no store still answers.
      expect((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
