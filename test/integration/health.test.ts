import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    expect(res.json()).toMatchObject({ data: { status: 'ok', postgres: 'ok', clickhouse: 'ok' }, meta: { requestId: expect.any(String) } });
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
