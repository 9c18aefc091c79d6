import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestContext, type TestContext } from '../support/app.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const someId = '00000000-0000-4000-8000-000000000000';
const routes: Array<{ method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: object }> = [
  {
    method: 'POST',
    url: '/api/admin/organizations',
    payload: { name: 'sneaky', plan: 'enterprise', rateLimitPerMinute: 1e6, rateLimitPerDay: 1e6 },
  },
  { method: 'PATCH', url: `/api/admin/organizations/${someId}`, payload: { plan: 'pro' } },
  { method: 'POST', url: `/api/admin/organizations/${someId}/workspaces`, payload: { name: 'w' } },
  { method: 'POST', url: '/api/admin/users', payload: { email: 'sneaky@example.com' } },
  { method: 'PATCH', url: `/api/admin/users/${someId}`, payload: { externalSubject: 's' } },
  { method: 'POST', url: `/api/admin/organizations/${someId}/members`, payload: { userId: someId } },
  { method: 'POST', url: '/api/admin/api-keys', payload: { scope: 'organization', organizationId: someId } },
  { method: 'GET', url: `/api/admin/api-keys?organizationId=${someId}` },
  { method: 'DELETE', url: `/api/admin/api-keys/${someId}` },
];

describe('admin token', () => {
  it.each(routes)('$method $url needs it: missing, wrong, or an API key in its place all answer 401', async (route) => {
    const tenant = await ctx.tenant();
    const attempts = [{}, { 'x-admin-token': 'test-admin-token-012345678' }, { 'x-admin-token': tenant.key }, tenant.headers];
    for (const headers of attempts) {
      const res = await ctx.app.inject({ ...route, headers });
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json().error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'invalid_admin_token' } });
      expect(res.body).not.toContain(tenant.key);
    }
    const [created] = await ctx.sql`select 1 from organizations where name = 'sneaky'
      union all select 1 from users where email = 'sneaky@example.com'`;
    expect(created).toBeUndefined();
  });

  it('is checked before the body is validated', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/admin/organizations', payload: { nonsense: true } });
    expect(res.statusCode).toBe(401);
  });

  it('is not an API key', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': ctx.adminHeaders['x-admin-token']! } });
    expect(res.statusCode).toBe(401);
  });

  it('opens the admin API when right', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/admin/users',
      headers: ctx.adminHeaders,
      payload: { email: 'ok@example.com' },
    });
    expect(res.statusCode).toBe(201);
  });

  it('unset, leaves every admin route answering 404', async () => {
    const app = await buildApp({ config: { ...ctx.config, LOUPE_ADMIN_TOKEN: undefined }, sql: ctx.sql, clickhouse: ctx.clickhouse });
    try {
      for (const route of routes) {
        const res = await app.inject({ ...route, headers: ctx.adminHeaders });
        expect(res.statusCode, `${route.method} ${route.url}`).toBe(404);
      }
    } finally {
      await app.close();
    }
  });
});
