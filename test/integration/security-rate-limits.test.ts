import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import postgres from 'postgres';
import { createFailedAuthLimiter } from '../../src/tenancy/service/failed-auth.js';
import { createRateLimiter } from '../../src/tenancy/service/rate-limit.js';
import { pruneWindows } from '../../src/tenancy/tables/rate-limit-table.js';
import { connectPostgres, type Sql } from '../../src/stores/postgres.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

// 12:00:05 UTC: 55 s left in the minute, 11 h 59 min 55 s left in the day.
const start = Date.UTC(2031, 4, 6, 12, 0, 5);
let clock = start;
const now = () => clock;
const MINUTE = 60_000;

let ctx: TestContext;
let secondSql: Sql;
let second: FastifyInstance;

beforeAll(async () => {
  ctx = await createTestContext({ rateLimits: { now } });
  // A second replica: its own app, connection pool and limiter, on the same database.
  secondSql = connectPostgres(ctx.postgresUrl);
  second = await buildApp({
    config: ctx.config,
    sql: secondSql,
    clickhouse: ctx.clickhouse,
    admit: createRateLimiter(secondSql, { now }).admit,
  });
});
afterAll(async () => {
  await second?.close();
  await secondSql?.end({ timeout: 5 });
  await ctx?.close();
});

const me = (tenant: Tenant, app: FastifyInstance = ctx.app, remoteAddress = '127.0.0.1') =>
  app.inject({ method: 'GET', url: '/api/me', headers: tenant.headers, remoteAddress });

const patchOrganization = (organizationId: string, payload: object) =>
  ctx.app.inject({ method: 'PATCH', url: `/api/admin/organizations/${organizationId}`, headers: ctx.adminHeaders, payload });

async function enterprise(perMinute: number, perDay: number) {
  const tenant = await ctx.tenant({ plan: 'free' });
  const res = await patchOrganization(tenant.organizationId, {
    plan: 'enterprise',
    rateLimitPerMinute: perMinute,
    rateLimitPerDay: perDay,
  });
  expect(res.statusCode, res.body).toBe(200);
  return tenant;
}

async function statuses(count: number, send: (i: number) => Promise<{ statusCode: number }>) {
  const out: number[] = [];
  for (let i = 0; i < count; i += 1) out.push((await send(i)).statusCode);
  return out;
}

describe('per-organization limits', () => {
  it('put RateLimit headers on every authenticated response, for the tighter window', async () => {
    clock = start;
    const tenant = await ctx.tenant({ plan: 'free' });
    const res = await me(tenant);
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ 'ratelimit-limit': '60', 'ratelimit-remaining': '59', 'ratelimit-reset': '55' });
    // An error of an authenticated request carries them too.
    const invalid = await ctx.app.inject({ method: 'GET', url: '/api/prompt?limit=0', headers: tenant.headers });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.headers).toMatchObject({ 'ratelimit-limit': '60', 'ratelimit-remaining': '58' });
    const pro = await me(await ctx.tenant({ plan: 'pro' }));
    expect(pro.headers).toMatchObject({ 'ratelimit-limit': '300', 'ratelimit-remaining': '299' });
  });

  it('refuse the 61st request of a free organization in a minute, with Retry-After, and admit again next minute', async () => {
    clock = start;
    const tenant = await ctx.tenant({ plan: 'free' });
    expect(new Set(await statuses(60, () => me(tenant)))).toEqual(new Set([200]));
    clock = start + 20_000;
    const refused = await me(tenant);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers).toMatchObject({
      'retry-after': '35',
      'ratelimit-limit': '60',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '35',
    });
    expect(refused.json().error).toMatchObject({ code: 'RATE_LIMITED', details: { window: 'minute', limit: 60, retryAfterSeconds: 35 } });
    clock = start + MINUTE;
    const next = await me(tenant);
    expect(next.statusCode).toBe(200);
    expect(next.headers['ratelimit-remaining']).toBe('59');
  });

  it('refuse a free organization after 1,000 requests in a day, until the next UTC day', async () => {
    clock = start;
    const tenant = await ctx.tenant({ plan: 'free' });
    for (let i = 0; i < 1000; i += 1) {
      if (i > 0 && i % 50 === 0) clock += MINUTE;
      const res = await me(tenant);
      if (res.statusCode !== 200) throw new Error(`request ${i} answered ${res.statusCode}`);
    }
    clock += MINUTE;
    const refused = await me(tenant);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.details).toMatchObject({ window: 'day', limit: 1000 });
    expect(refused.headers['ratelimit-limit']).toBe('1000');
    expect(Number(refused.headers['retry-after'])).toBe(Math.ceil((Date.UTC(2031, 4, 7) - clock) / 1000));
    clock = Date.UTC(2031, 4, 7, 0, 0, 1);
    expect((await me(tenant)).statusCode).toBe(200);
  });

  it('count the day only for admitted requests, and report whichever window is tighter', async () => {
    clock = start;
    const tenant = await enterprise(5, 8);
    const first = await me(tenant);
    // Minute: 4 left; day: 7 left, so the minute is reported.
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'ratelimit-reset': '55' });
    expect(await statuses(6, () => me(tenant))).toEqual([200, 200, 200, 200, 429, 429]);
    clock += MINUTE;
    // 5 admitted so far: the two refused did not use the day. Minute: 4 left; day: 2 left.
    const sixth = await me(tenant);
    expect(sixth.headers).toMatchObject({ 'ratelimit-limit': '8', 'ratelimit-remaining': '2' });
    expect(Number(sixth.headers['ratelimit-reset'])).toBe(Math.ceil((Date.UTC(2031, 4, 7) - clock) / 1000));
    const seventh = await me(tenant);
    expect(seventh.headers).toMatchObject({ 'ratelimit-limit': '8', 'ratelimit-remaining': '1' });
    expect((await me(tenant)).statusCode).toBe(200);
    const refused = await me(tenant);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.details.window).toBe('day');
    clock += 5 * MINUTE;
    expect((await me(tenant)).statusCode).toBe(429);
    clock = Date.UTC(2031, 4, 7, 0, 0, 0);
    expect((await me(tenant)).statusCode).toBe(200);
  });

  it('are one budget for two app instances on one PostgreSQL, even under concurrent requests', async () => {
    clock = start;
    const tenant = await enterprise(10, 1000);
    const alternating = await statuses(12, (i) => me(tenant, i % 2 === 0 ? ctx.app : second));
    expect(alternating).toEqual([...Array(10).fill(200), 429, 429]);
    clock += MINUTE;
    const concurrent = await Promise.all(Array.from({ length: 30 }, (_, i) => me(tenant, i % 2 === 0 ? ctx.app : second)));
    expect(concurrent.filter((r) => r.statusCode === 200)).toHaveLength(10);
    expect(concurrent.filter((r) => r.statusCode === 429)).toHaveLength(20);
  });

  it('reserve in batches of 1% for large limits, reporting what was used rather than reserved', async () => {
    clock = start;
    const tenant = await enterprise(10_000, 1_000_000);
    const answers = await statuses(5, () => me(tenant));
    expect(answers).toEqual([200, 200, 200, 200, 200]);
    const last = await me(tenant, second);
    expect(last.headers).toMatchObject({ 'ratelimit-limit': '10000' });
    const counted = await ctx.sql<{ count: number }[]>`
      select count from rate_limit_windows where organization_id = ${tenant.organizationId} and kind = 'minute'`;
    // Each replica reserved 100; what one has not used counts as used.
    expect(counted[0]!.count).toBe(200);
    // A replica reports from the counts of its last reservation (100 then) and its own use (6).
    expect((await me(tenant)).headers['ratelimit-remaining']).toBe(String(10_000 - 6));
  });

  it('refuse an exhausted organization without asking the database again in that minute', async () => {
    clock = start;
    const tenant = await enterprise(2, 100);
    expect(await statuses(4, () => me(tenant))).toEqual([200, 200, 429, 429]);
    // A refusal the database did not see leaves its row untouched.
    const before = await ctx.sql`select xmin from rate_limit_windows where organization_id = ${tenant.organizationId} and kind = 'minute'`;
    expect(await statuses(5, () => me(tenant))).toEqual([429, 429, 429, 429, 429]);
    const after = await ctx.sql`select xmin from rate_limit_windows where organization_id = ${tenant.organizationId} and kind = 'minute'`;
    expect(after[0]!.xmin).toBe(before[0]!.xmin);
  });

  it('follow a plan change made through the admin API at once', async () => {
    clock = start;
    const tenant = await ctx.tenant({ plan: 'free' });
    expect((await me(tenant)).headers['ratelimit-limit']).toBe('60');
    const res = await patchOrganization(tenant.organizationId, { plan: 'pro' });
    expect(res.json().data).toMatchObject({ plan: 'pro', rateLimitPerMinute: null, rateLimitPerDay: null });
    expect((await me(tenant)).headers['ratelimit-limit']).toBe('300');
    await patchOrganization(tenant.organizationId, { plan: 'enterprise', rateLimitPerMinute: 7, rateLimitPerDay: 70 });
    expect((await me(tenant)).headers['ratelimit-limit']).toBe('7');
    const raised = await patchOrganization(tenant.organizationId, { rateLimitPerMinute: 9 });
    expect(raised.json().data).toMatchObject({ plan: 'enterprise', rateLimitPerMinute: 9, rateLimitPerDay: 70 });
    const back = await patchOrganization(tenant.organizationId, { plan: 'free' });
    expect(back.json().data).toMatchObject({ plan: 'free', rateLimitPerMinute: null, rateLimitPerDay: null });
  });

  it('prune windows that can no longer count', async () => {
    clock = start;
    const tenant = await ctx.tenant({ plan: 'pro' });
    await me(tenant);
    const rows = () => ctx.sql`select kind from rate_limit_windows where organization_id = ${tenant.organizationId} order by kind`;
    expect((await rows()).map((r) => r.kind)).toEqual(['day', 'minute']);
    await pruneWindows(ctx.sql, start + 2 * MINUTE);
    expect((await rows()).map((r) => r.kind)).toEqual(['day']);
    await pruneWindows(ctx.sql, start + 2 * 86_400_000);
    expect(await rows()).toHaveLength(0);
  });
});

describe('PATCH /api/admin/organizations/:organizationId', () => {
  it('rejects limits off the enterprise plan, an enterprise plan without limits, an empty body, an unknown organization', async () => {
    const tenant = await ctx.tenant({ plan: 'pro' });
    const offPlan = await patchOrganization(tenant.organizationId, { rateLimitPerMinute: 5 });
    expect(offPlan.statusCode).toBe(400);
    expect(offPlan.json().error.details.issues).toEqual([{ path: 'body.plan', message: expect.any(String) }]);
    const noLimits = await patchOrganization(tenant.organizationId, { plan: 'enterprise', rateLimitPerDay: 10 });
    expect(noLimits.statusCode).toBe(400);
    expect(noLimits.json().error.details.issues).toEqual([
      { path: 'body.rateLimitPerMinute', message: 'is required for the enterprise plan' },
    ]);
    expect((await patchOrganization(tenant.organizationId, {})).statusCode).toBe(400);
    expect((await patchOrganization(tenant.organizationId, { plan: 'gold' })).statusCode).toBe(400);
    expect(
      (await patchOrganization(tenant.organizationId, { rateLimitPerMinute: 0, plan: 'enterprise', rateLimitPerDay: 1 })).statusCode,
    ).toBe(400);
    expect((await patchOrganization('00000000-0000-4000-8000-000000000000', { plan: 'free' })).statusCode).toBe(404);
  });
});

describe('failed authentication per client address', () => {
  it('answers 429 to failures after 20 in a minute, for that address only, and always lets a valid key through', async () => {
    clock = start;
    const tenant = await ctx.tenant({ plan: 'enterprise' });
    const wrong = { ...tenant, headers: { 'x-api-key': `${tenant.key}0` } };
    expect(new Set(await statuses(20, () => me(wrong, ctx.app, '10.0.0.1')))).toEqual(new Set([401]));
    // Behind one address (a NAT), the valid key of another client still passes.
    expect((await me(tenant, ctx.app, '10.0.0.1')).statusCode).toBe(200);
    const blocked = await me(wrong, ctx.app, '10.0.0.1');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().error.details.reason).toBe('too_many_failed_attempts');
    expect(blocked.headers['retry-after']).toBe('60');
    expect(blocked.headers['ratelimit-limit']).toBeUndefined();
    expect((await me(wrong, ctx.app, '10.0.0.2')).statusCode).toBe(401);
    // A key created after the address went over the limit passes too (the directory reads it).
    const late = await ctx.tenant({ plan: 'enterprise' });
    expect((await me(late, ctx.app, '10.0.0.1')).statusCode).toBe(200);
    clock += MINUTE;
    expect((await me(wrong, ctx.app, '10.0.0.1')).statusCode).toBe(401);
  });

  it('costs no database work for a flood of guesses from an address over the limit', async () => {
    clock = start;
    let queries = 0;
    const counted = postgres(ctx.postgresUrl, { max: 4, onnotice: () => {}, debug: () => (queries += 1) });
    const app = await buildApp({
      config: ctx.config,
      sql: counted,
      clickhouse: ctx.clickhouse,
      failedAuth: createFailedAuthLimiter({ now }),
    });
    try {
      const tenant = await ctx.tenant({ plan: 'enterprise' });
      const guess = (i: number) => ({ ...tenant, headers: { 'x-api-key': `lpk_${i.toString(16).padStart(12, '0')}_${'x'.repeat(40)}` } });
      expect(new Set(await statuses(20, (i) => me(guess(i), app, '10.0.9.1')))).toEqual(new Set([401]));
      const before = queries;
      const flood = await Promise.all(Array.from({ length: 200 }, (_, i) => me(guess(1000 + i), app, '10.0.9.1')));
      expect(new Set(flood.map((r) => r.statusCode))).toEqual(new Set([429]));
      // The directory's reads only: one or two, not one per guess.
      expect(queries - before).toBeLessThanOrEqual(3);
      const beforeValid = queries;
      expect((await me(tenant, app, '10.0.9.1')).statusCode).toBe(200);
      expect(queries).toBeGreaterThan(beforeValid); // the count is real: a valid key is looked up
    } finally {
      await app.close();
      await counted.end({ timeout: 5 });
    }
  });

  it('counts invalid bearer tokens and admin tokens too, and lets the limit run out', async () => {
    clock = start;
    const bad = (address: string) =>
      ctx.app.inject({ method: 'GET', url: '/api/me', headers: { authorization: 'Bearer x.y.z' }, remoteAddress: address });
    expect(new Set(await statuses(20, () => bad('10.0.1.1')))).toEqual(new Set([401]));
    expect((await bad('10.0.1.1')).statusCode).toBe(429);

    const admin = (token: string) =>
      ctx.app.inject({
        method: 'GET',
        url: '/api/admin/api-keys',
        query: { organizationId: '00000000-0000-4000-8000-000000000000' },
        headers: { 'x-admin-token': token },
        remoteAddress: '10.0.2.1',
      });
    expect(new Set(await statuses(20, () => admin('guess-guess-guess-0')))).toEqual(new Set([401]));
    expect((await admin('guess-guess-guess-0')).statusCode).toBe(429);
    // The valid admin token always passes (the organization asked for does not exist: 404).
    expect((await admin(ctx.adminHeaders['x-admin-token']!)).statusCode).toBe(404);
    clock += MINUTE;
    expect((await admin('guess-guess-guess-0')).statusCode).toBe(401);
  });

  it('does not count refusals of a valid credential (403, 400)', async () => {
    clock = start;
    const tenant = await ctx.tenant();
    const other = await ctx.tenant();
    const outside = { ...tenant, headers: { ...tenant.headers, 'x-workspace-id': other.workspaceId } };
    expect(new Set(await statuses(25, () => me(outside, ctx.app, '10.0.3.1')))).toEqual(new Set([403]));
    expect((await me(tenant, ctx.app, '10.0.3.1')).statusCode).toBe(200);
  });
});
