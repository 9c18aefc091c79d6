import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createTestContext, type TestContext } from '../support/app.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const post = (url: string, payload: unknown, headers = ctx.adminHeaders) =>
  ctx.app.inject({ method: 'POST', url, payload: payload as object, headers });

describe('admin API', () => {
  it('creates an organization, a workspace and a key that authenticates; revoking it answers 401', async () => {
    const org = await post('/api/admin/organizations', { name: 'acme', plan: 'free' });
    expect(org.statusCode).toBe(201);
    expect(org.json().data).toMatchObject({ name: 'acme', plan: 'free', rateLimitPerMinute: null });
    const organizationId = org.json().data.id;

    const ws = await post(`/api/admin/organizations/${organizationId}/workspaces`, { name: 'prod' });
    expect(ws.statusCode).toBe(201);
    const workspaceId = ws.json().data.id;

    const created = await post('/api/admin/api-keys', { scope: 'workspace', organizationId, workspaceId, name: 'ci' });
    expect(created.statusCode).toBe(201);
    const { key, id, prefix } = created.json().data;
    expect(key).toMatch(/^lpk_[0-9a-f]{12}_[A-Za-z0-9]{40}$/);
    expect(key.startsWith(prefix)).toBe(true);

    const me = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': key } });
    expect(me.statusCode).toBe(200);
    expect(me.json().data).toMatchObject({ workspaceId, organizationId, plan: 'free' });

    const list = await ctx.app.inject({
      method: 'GET',
      url: `/api/admin/api-keys?organizationId=${organizationId}`,
      headers: ctx.adminHeaders,
    });
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toHaveLength(1);
    expect(list.body).not.toContain(key);
    expect(list.json().data[0]).toMatchObject({ id, prefix, scope: 'workspace', revokedAt: null });

    // Only a hash is stored.
    const [row] = await ctx.sql<{ hash: Buffer; prefix: string }[]>`select hash, prefix from api_keys where id = ${id}`;
    expect(Buffer.from(row!.hash).toString('utf8')).not.toContain(key.slice(17));

    const revoked = await ctx.app.inject({ method: 'DELETE', url: `/api/admin/api-keys/${id}`, headers: ctx.adminHeaders });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().data.revokedAt).toEqual(expect.any(String));
    const after = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': key } });
    expect(after.statusCode).toBe(401);
    expect(after.json().error.code).toBe('UNAUTHORIZED');
  });

  it('records when a key was last used', async () => {
    const tenant = await ctx.tenant();
    await ctx.app.inject({ method: 'GET', url: '/api/me', headers: tenant.headers });
    await new Promise((r) => setTimeout(r, 100));
    const [row] = await ctx.sql<{ lastUsedAt: Date | null }[]>`
      select last_used_at as "lastUsedAt" from api_keys where workspace_id = ${tenant.workspaceId}`;
    expect(row!.lastUsedAt).toBeInstanceOf(Date);
  });

  it('creates users and memberships, and user-scoped keys only for members', async () => {
    const org = (await post('/api/admin/organizations', { name: 'users-org', plan: 'pro' })).json().data;
    const user = await post('/api/admin/users', { email: 'Ada@Example.com' });
    expect(user.statusCode).toBe(201);
    expect(user.json().data.email).toBe('ada@example.com');
    const notMember = await post('/api/admin/api-keys', { scope: 'user', organizationId: org.id, userId: user.json().data.id });
    expect(notMember.statusCode).toBe(400);
    const member = await post(`/api/admin/organizations/${org.id}/members`, { userId: user.json().data.id });
    expect(member.statusCode).toBe(201);
    const key = await post('/api/admin/api-keys', { scope: 'user', organizationId: org.id, userId: user.json().data.id });
    expect(key.statusCode).toBe(201);
    expect(key.json().data.scope).toBe('user');
  });

  it('answers 400, 404 and 409 with the error envelope', async () => {
    const bad = await post('/api/admin/organizations', { name: '', plan: 'gold' });
    expect(bad.statusCode).toBe(400);
    expect(
      bad
        .json()
        .error.details.issues.map((i: { path: string }) => i.path)
        .sort(),
    ).toEqual(['body.name', 'body.plan']);

    const enterprise = await post('/api/admin/organizations', { name: 'big', plan: 'enterprise' });
    expect(enterprise.statusCode).toBe(400);
    expect(
      enterprise
        .json()
        .error.details.issues.map((i: { path: string }) => i.path)
        .sort(),
    ).toEqual(['body.rateLimitPerDay', 'body.rateLimitPerMinute']);

    const dup1 = await post('/api/admin/organizations', { name: 'twice', plan: 'pro' });
    expect(dup1.statusCode).toBe(201);
    const dup2 = await post('/api/admin/organizations', { name: 'twice', plan: 'pro' });
    expect(dup2.statusCode).toBe(409);
    expect(dup2.json().error.code).toBe('CONFLICT');

    const missingOrg = await post('/api/admin/organizations/00000000-0000-4000-8000-000000000000/workspaces', { name: 'x' });
    expect(missingOrg.statusCode).toBe(404);

    const wrongScope = await post('/api/admin/api-keys', { scope: 'workspace', organizationId: dup1.json().data.id });
    expect(wrongScope.statusCode).toBe(400);
    expect(wrongScope.json().error.details.issues[0].path).toBe('body.workspaceId');

    const unknownKey = await ctx.app.inject({
      method: 'DELETE',
      url: '/api/admin/api-keys/00000000-0000-4000-8000-000000000000',
      headers: ctx.adminHeaders,
    });
    expect(unknownKey.statusCode).toBe(404);
  });

  it('answers 401 without or with a wrong admin token', async () => {
    const none = await post('/api/admin/organizations', { name: 'a', plan: 'pro' }, {});
    expect(none.statusCode).toBe(401);
    const wrong = await post('/api/admin/organizations', { name: 'a', plan: 'pro' }, { 'x-admin-token': 'wrong-token-0123456789' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.code).toBe('UNAUTHORIZED');
    expect(wrong.body).not.toContain('wrong-token');
  });

  it('answers 404 for every admin route when no admin token is configured', async () => {
    const config = loadConfig({
      ...Object.fromEntries(Object.entries(ctx.config).map(([k, v]) => [k, v === undefined ? undefined : String(v)])),
      LOUPE_ADMIN_TOKEN: '',
    });
    const app = await buildApp({ config, sql: ctx.sql, clickhouse: ctx.clickhouse });
    try {
      for (const [method, url] of [
        ['POST', '/api/admin/organizations'],
        ['GET', '/api/admin/api-keys?organizationId=00000000-0000-4000-8000-000000000000'],
        ['DELETE', '/api/admin/api-keys/00000000-0000-4000-8000-000000000000'],
      ] as const) {
        const res = await app.inject({
          method,
          url,
          headers: { 'x-admin-token': 'test-admin-token-0123456789' },
          ...(method === 'POST' ? { payload: {} } : {}),
        });
        expect(res.statusCode).toBe(404);
        expect(res.json().error.code).toBe('NOT_FOUND');
      }
    } finally {
      await app.close();
    }
  });
});
