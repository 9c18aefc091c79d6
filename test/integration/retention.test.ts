import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { get, post, span, trace, uniqueId } from './traces-fixtures.js';
import { postScores } from './scores-fixtures.js';

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  a = await ctx.tenant();
  b = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
const dayOf = (iso: string) => iso.slice(0, 10);

async function sendTrace(tenant: Tenant, environment: string, age: number) {
  const start = daysAgo(age);
  const end = new Date(Date.parse(start) + 1000).toISOString();
  const sent = trace({ environment, spans: [span({ startTime: start, endTime: end }), span({ startTime: start, endTime: end })] });
  expect((await post(ctx, tenant, [sent])).statusCode).toBeLessThan(300);
  const score = await postScores(ctx, tenant, { name: 'quality', value: 1, traceId: sent.traceId, environment, timestamp: start });
  expect(score.statusCode).toBe(200);
  return sent.traceId;
}

/** Trace ids the workspace lists (the read waits for its writes to be stored). */
async function traceIds(tenant: Tenant): Promise<string[]> {
  const res = await get(ctx, tenant, '/api/traces?limit=100');
  expect(res.statusCode).toBe(200);
  return res.json().data.map((t: { traceId: string }) => t.traceId);
}

async function scoredTraces(tenant: Tenant): Promise<string[]> {
  const res = await get(ctx, tenant, '/api/scores?limit=100');
  expect(res.statusCode).toBe(200);
  return res.json().data.map((s: { traceId: string }) => s.traceId);
}

const usage = async (tenant: Tenant) => {
  const res = await get(ctx, tenant, '/api/usage');
  expect(res.statusCode).toBe(200);
  return res.json().data;
};

const admin = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object, headers = ctx.adminHeaders) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

describe('retention per workspace and environment', () => {
  it('removes only the expired data of the workspace and environment, leaves prompts, and the usage figures follow', async () => {
    const aProdOld = await sendTrace(a, 'production', 20);
    const aDevOld = await sendTrace(a, 'development', 20);
    const aDevNew = await sendTrace(a, 'development', 2);
    const bDevOld = await sendTrace(b, 'development', 20);
    const prompt = await ctx.app.inject({
      method: 'POST',
      url: '/api/prompt',
      headers: a.headers,
      payload: { name: uniqueId('kept'), systemPrompt: 'You help.' },
    });
    expect(prompt.statusCode).toBe(201);
    expect((await traceIds(a)).sort()).toEqual([aProdOld, aDevOld, aDevNew].sort());
    expect(await traceIds(b)).toEqual([bDevOld]);

    const before = await usage(a);
    expect(before.days).toEqual([
      { day: dayOf(daysAgo(20)), traces: 2, spans: 4 },
      { day: dayOf(daysAgo(2)), traces: 1, spans: 2 },
    ]);
    expect(before.oldestDataAt?.slice(0, 10)).toBe(dayOf(daysAgo(20)));
    expect(before.storage.bytesOnDisk).toBeGreaterThan(0);
    expect(before.description).toMatch(/estimate/);

    const set = await admin('PUT', `/api/admin/workspaces/${a.workspaceId}/retention`, {
      retentionDays: 30,
      environments: { development: 7 },
    });
    expect(set.statusCode).toBe(200);
    expect(set.json().data).toMatchObject({ retentionDays: 30, environments: { development: 7 }, effectiveDays: 30 });
    const applied = await admin('POST', '/api/admin/retention/apply', {});
    expect(applied.statusCode).toBe(200);

    // A's development trace older than 7 days is gone, with its spans and scores; production
    // (30 days) and the recent one stay; B's trace of the same age and environment stays.
    expect((await traceIds(a)).sort()).toEqual([aProdOld, aDevNew].sort());
    expect(await traceIds(b)).toEqual([bDevOld]);
    expect((await scoredTraces(a)).sort()).toEqual([aProdOld, aDevNew].sort());
    expect(await scoredTraces(b)).toEqual([bDevOld]);
    expect((await get(ctx, a, `/api/traces/${aDevOld}`)).statusCode).toBe(404);
    const prompts = await get(ctx, a, '/api/prompt');
    expect(prompts.json().data.map((p: { name: string }) => p.name)).toContain(prompt.json().data.name);

    const after = await usage(a);
    expect(after.days).toEqual([
      { day: dayOf(daysAgo(20)), traces: 1, spans: 2 },
      { day: dayOf(daysAgo(2)), traces: 1, spans: 2 },
    ]);
    expect(after.storage.rows).toBeLessThan(before.storage.rows);
    expect(after.retention).toMatchObject({ retentionDays: 30, environments: { development: 7 } });

    // The workspace's own default of 10 days now expires its production trace too.
    expect((await admin('PUT', `/api/admin/workspaces/${a.workspaceId}/retention`, { retentionDays: 10 })).statusCode).toBe(200);
    expect((await admin('POST', '/api/admin/retention/apply', { workspaceId: a.workspaceId })).statusCode).toBe(200);
    expect(await traceIds(a)).toEqual([aDevNew]);
    expect((await usage(a)).oldestDataAt?.slice(0, 10)).toBe(dayOf(daysAgo(2)));
    expect(await traceIds(b)).toEqual([bDevOld]);
  });

  // A row already expired when it arrives may be dropped by the engine's next merge, before any
  // apply: only what holds after an apply is asserted for it.
  it('new rows get the setting at insert: a trace older than the retention is not kept, a recent one is', async () => {
    const tenant = await ctx.tenant();
    expect((await admin('PUT', `/api/admin/workspaces/${tenant.workspaceId}/retention`, { retentionDays: 5 })).statusCode).toBe(200);
    const old = await sendTrace(tenant, 'production', 6);
    const recent = await sendTrace(tenant, 'production', 4);
    await usage(tenant);
    const expiries = await (
      await ctx.clickhouse.query({
        query: `SELECT trace_id, toString(expires_at) AS expires FROM spans WHERE workspace_id = {w:String}`,
        query_params: { w: tenant.workspaceId },
        format: 'JSONEachRow',
      })
    ).json<{ trace_id: string; expires: string }>();
    const recentExpiry = expiries.find((r) => r.trace_id === recent)?.expires;
    // Written at insert from the setting: four days ago plus five days.
    expect(recentExpiry?.slice(0, 10)).toBe(dayOf(new Date(Date.now() + 86_400_000).toISOString()));
    expect((await admin('POST', '/api/admin/retention/apply', {})).statusCode).toBe(200);
    expect(await traceIds(tenant)).toEqual([recent]);
    expect(await scoredTraces(tenant)).toEqual([recent]);
    expect(old).not.toBe(recent);
  });

  it('the workspace reads its retention; the admin API validates and needs the admin token', async () => {
    const tenant = await ctx.tenant();
    const none = await get(ctx, tenant, '/api/retention');
    expect(none.statusCode).toBe(200);
    expect(none.json().data).toMatchObject({ workspaceId: tenant.workspaceId, retentionDays: null, environments: {} });

    const zero = await admin('PUT', `/api/admin/workspaces/${tenant.workspaceId}/retention`, { retentionDays: 0 });
    expect(zero.statusCode).toBe(400);
    expect(zero.json().error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(zero.json().error)).toContain('retentionDays');
    const unknown = await admin('PUT', `/api/admin/workspaces/00000000-0000-4000-8000-000000000000/retention`, { retentionDays: 3 });
    expect(unknown.statusCode).toBe(404);
    const noToken = await admin('POST', '/api/admin/retention/apply', {}, {});
    expect(noToken.statusCode).toBe(401);
    const asTenant = await admin('PUT', `/api/admin/workspaces/${tenant.workspaceId}/retention`, { retentionDays: 3 }, tenant.headers);
    expect(asTenant.statusCode).toBe(401);
    expect((await get(ctx, tenant, '/api/retention')).json().data.retentionDays).toBeNull();
  });
});
