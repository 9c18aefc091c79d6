import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres, type Sql } from '../../src/stores/postgres.js';
import { createScoreConfigCache } from '../../src/scores/service/config-cache.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { uniqueId } from './traces-fixtures.js';
import { postScores } from './scores-fixtures.js';

/**
 * Score configs kept in memory (config-cache.ts) against a real PostgreSQL: a change made by
 * another replica or an operator's SQL reaches score ingest at commit, not after the cache's
 * lifetime, which these tests set to an hour so only the notification can explain it.
 */
let ctx: TestContext;
/** Another replica's connection to the same database. */
let other: Sql;

beforeAll(async () => {
  ctx = await createTestContext({ env: { LOUPE_CREDENTIAL_CACHE_MS: '3600000' } });
  other = connectPostgres(ctx.postgresUrl, { max: 2 });
});
afterAll(async () => {
  await other?.end({ timeout: 5 });
  await ctx?.close();
});

/** Polls until `check` holds, at most `ms`. */
async function within(ms: number, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (await check()) return;
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Sends one score of `name` with `value`; answers the per-item result. */
const send = async (tenant: Tenant, name: string, value: unknown) =>
  (await postScores(ctx, tenant, { name, value, traceId: uniqueId('t') })).json().data as {
    accepted: number;
    errors: { path: string; message: string }[];
  };

const createConfig = (tenant: Tenant, payload: object) =>
  ctx.app.inject({ method: 'POST', url: '/api/score-configs', headers: tenant.headers, payload });

describe('score configs in memory', () => {
  it("reads a workspace's configs once, then answers from memory, names without a config included", async () => {
    const tenant = await ctx.tenant();
    expect((await createConfig(tenant, { name: 'q', dataType: 'numeric', min: 0, max: 1 })).statusCode).toBe(201);
    const cache = createScoreConfigCache(ctx.sql, { ttlMs: 60_000 });
    expect(await cache.ready()).toBe(true);
    const first = await cache.byName(tenant.workspaceId, ['q', 'unconfigured']);
    expect([...first.keys()]).toEqual(['q']);
    expect(first.get('q')).toMatchObject({ name: 'q', dataType: 'numeric', min: 0, max: 1 });
    expect([...(await cache.byName(tenant.workspaceId, ['unconfigured'])).keys()]).toEqual([]);
    expect([...(await cache.byName(tenant.workspaceId, ['q'])).keys()]).toEqual(['q']);
    expect(cache.counts).toEqual({ reads: 1, hits: 2 });
    // Another workspace is read on its own and never sees these.
    const stranger = await ctx.tenant();
    expect([...(await cache.byName(stranger.workspaceId, ['q'])).keys()]).toEqual([]);
    expect(cache.counts).toEqual({ reads: 2, hits: 2 });
  });

  it('reads every time with a lifetime of 0, and forgets when told', async () => {
    const tenant = await ctx.tenant();
    const off = createScoreConfigCache(ctx.sql, { ttlMs: 0 });
    expect(await off.ready()).toBe(false);
    await off.byName(tenant.workspaceId, ['q']);
    await off.byName(tenant.workspaceId, ['q']);
    expect(off.counts).toEqual({ reads: 2, hits: 0 });

    const on = createScoreConfigCache(ctx.sql, { ttlMs: 60_000 });
    await on.ready();
    await on.byName(tenant.workspaceId, ['q']);
    on.forget();
    await on.byName(tenant.workspaceId, ['q']);
    expect(on.counts).toEqual({ reads: 2, hits: 0 });
  });

  it('validates against a config made through this service at once, and after it changes or goes', async () => {
    const tenant = await ctx.tenant();
    expect((await send(tenant, 'rating', 7)).accepted).toBe(1);
    const made = (await createConfig(tenant, { name: 'rating', dataType: 'numeric', min: 0, max: 5 })).json().data as { id: string };
    expect((await send(tenant, 'rating', 7)).errors).toEqual([
      { index: 0, id: null, path: 'scores.0.value', message: 'must be at most 5 (config)' },
    ]);
    const patch = await ctx.app.inject({
      method: 'PATCH',
      url: `/api/score-configs/${made.id}`,
      headers: tenant.headers,
      payload: { max: 10 },
    });
    expect(patch.statusCode).toBe(200);
    expect((await send(tenant, 'rating', 7)).accepted).toBe(1);
    expect((await send(tenant, 'rating', 11)).errors[0]?.message).toBe('must be at most 10 (config)');
    await ctx.app.inject({ method: 'DELETE', url: `/api/score-configs/${made.id}`, headers: tenant.headers });
    expect((await send(tenant, 'rating', 11)).accepted).toBe(1);
  });

  it("validates against another replica's new config, and its change, at once", async () => {
    const tenant = await ctx.tenant();
    expect((await send(tenant, 'tone', 'curt')).accepted).toBe(1);
    await other`
      insert into score_configs (workspace_id, name, data_type, categories)
      values (${tenant.workspaceId}, 'tone', 'categorical', ${other.json([{ label: 'polite', value: 1 }])})`;
    await within(2_000, async () => (await send(tenant, 'tone', 'curt')).accepted === 0);
    expect((await send(tenant, 'tone', 'curt')).errors[0]).toMatchObject({ path: 'scores.0.value' });
    expect((await send(tenant, 'tone', 'polite')).accepted).toBe(1);
    await other`
      update score_configs set categories = ${other.json([
        { label: 'polite', value: 1 },
        { label: 'curt', value: 0 },
      ])}
      where workspace_id = ${tenant.workspaceId} and name = 'tone'`;
    await within(2_000, async () => (await send(tenant, 'tone', 'curt')).accepted === 1);
  });
});
