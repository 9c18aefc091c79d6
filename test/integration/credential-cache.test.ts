import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres, type Sql } from '../../src/stores/postgres.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { createCredentialCache } from '../../src/tenancy/service/credential-cache.js';
import { keyPrefix } from '../../src/tenancy/model/keys.js';
import { createTestContext, type TestContext } from '../support/app.js';

/**
 * API keys kept in memory (credential-cache.ts) against a real PostgreSQL: what another
 * replica, the CLI or an operator's SQL changes reaches this one at commit, not after the
 * cache's lifetime, which these tests set to an hour so only the notification can explain it.
 */
let ctx: TestContext;
/** Another replica's connection to the same database. */
let other: Sql;

beforeAll(async () => {
  ctx = await createTestContext({ env: { LOUPE_CREDENTIAL_CACHE_MS: '3600000' }, rateLimits: true });
  other = connectPostgres(ctx.postgresUrl, { max: 2 });
});
afterAll(async () => {
  await other?.end({ timeout: 5 });
  await ctx?.close();
});

const me = (headers: Record<string, string>) => ctx.app.inject({ method: 'GET', url: '/api/me', headers });

/** Polls until `check` holds, at most `ms`; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('API keys in memory', () => {
  it('reads a key once, then answers from memory', async () => {
    const tenant = await ctx.tenant();
    const cache = createCredentialCache(ctx.sql, { ttlMs: 60_000 });
    expect(await cache.ready()).toBe(true);
    const prefix = keyPrefix(tenant.key);
    const first = await cache.keysByPrefix(prefix);
    const again = await cache.keysByPrefix(prefix);
    expect(again).toEqual(first);
    expect(first).toHaveLength(1);
    expect(cache.counts).toEqual({ reads: 1, hits: 1 });
    // A prefix without a key is read every time: a key created meanwhile works at once.
    await cache.keysByPrefix('lpk_000000000000');
    await cache.keysByPrefix('lpk_000000000000');
    expect(cache.counts).toEqual({ reads: 3, hits: 1 });
  });

  it('reads every time with a lifetime of 0, and forgets when told', async () => {
    const tenant = await ctx.tenant();
    const off = createCredentialCache(ctx.sql, { ttlMs: 0 });
    expect(await off.ready()).toBe(false);
    await off.keysByPrefix(keyPrefix(tenant.key));
    await off.keysByPrefix(keyPrefix(tenant.key));
    expect(off.counts).toEqual({ reads: 2, hits: 0 });

    const on = createCredentialCache(ctx.sql, { ttlMs: 60_000 });
    await on.ready();
    await on.keysByPrefix(keyPrefix(tenant.key));
    on.forget();
    await on.keysByPrefix(keyPrefix(tenant.key));
    expect(on.counts).toEqual({ reads: 2, hits: 0 });
  });

  it('drops a key at once when another replica revokes it', async () => {
    const tenant = await ctx.tenant();
    expect((await me(tenant.headers)).statusCode).toBe(200);
    expect((await me(tenant.headers)).statusCode).toBe(200);
    await other`update api_keys set revoked_at = now() where workspace_id = ${tenant.workspaceId}`;
    const took = await within(2_000, async () => (await me(tenant.headers)).statusCode === 401);
    expect(took).toBeLessThan(2_000);
    expect((await me(tenant.headers)).json().error.details.reason).toBe('invalid_api_key');
  });

  it('applies a plan changed on another replica to the next requests', async () => {
    const tenant = await ctx.tenant({ plan: 'free' });
    const limit = async () => (await me(tenant.headers)).headers['ratelimit-limit'];
    const before = await limit();
    expect(before).toBeDefined();
    await tenancy.updateOrganization(other, tenant.organizationId, {
      plan: 'enterprise',
      rateLimitPerMinute: 12_345,
      rateLimitPerDay: 999_999,
    });
    await within(2_000, async () => (await limit()) === '12345');
  });

  it('finds a key created on another replica at once', async () => {
    const tenant = await ctx.tenant();
    expect((await me(tenant.headers)).statusCode).toBe(200);
    const created = await tenancy.createApiKey(other, {
      scope: 'workspace',
      organizationId: tenant.organizationId,
      workspaceId: tenant.workspaceId,
    });
    const res = await me({ 'x-api-key': created.key });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.workspaceId).toBe(tenant.workspaceId);
  });

  it('still drops a revoked key after its listening connection was cut', async () => {
    const tenant = await ctx.tenant();
    expect((await me(tenant.headers)).statusCode).toBe(200);
    const cut = await other<{ cut: boolean }[]>`
      select pg_terminate_backend(pid) as cut from pg_stat_activity
      where datname = current_database() and query ilike 'listen%loupe_credentials%'`;
    expect(cut.length).toBeGreaterThan(0);
    await other`update api_keys set revoked_at = now() where workspace_id = ${tenant.workspaceId}`;
    await within(5_000, async () => (await me(tenant.headers)).statusCode === 401);
  });

  it('leaves keys in memory when only their last use is recorded', async () => {
    const tenant = await ctx.tenant();
    const cache = createCredentialCache(ctx.sql, { ttlMs: 60_000 });
    await cache.ready();
    await cache.keysByPrefix(keyPrefix(tenant.key));
    await other`update api_keys set last_used_at = now() where workspace_id = ${tenant.workspaceId}`;
    // A notification would have arrived by now; none did.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await cache.keysByPrefix(keyPrefix(tenant.key));
    expect(cache.counts).toEqual({ reads: 1, hits: 1 });
    await other`update organizations set name = name || '-renamed' where id = ${tenant.organizationId}`;
    await new Promise((resolve) => setTimeout(resolve, 200));
    await cache.keysByPrefix(keyPrefix(tenant.key));
    expect(cache.counts).toEqual({ reads: 1, hits: 2 });
    await other`update organizations set plan = 'free' where id = ${tenant.organizationId}`;
    await within(2_000, async () => {
      await cache.keysByPrefix(keyPrefix(tenant.key));
      return cache.counts.reads === 2;
    });
  });
});
