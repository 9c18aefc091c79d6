import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { appsWithSettings, loadSqlFixtures, sql } from './sql-fixtures.js';

/** Tiny limits answer 422 QUERY_TOO_EXPENSIVE naming the limit; a query waiting for a place too long 429; every query counts against the plan. */
let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
const apps = appsWithSettings(() => ctx);
const appWith = (settings: Parameters<typeof apps.with>[0]) => apps.with(settings);

beforeAll(async () => {
  ctx = await createTestContext({ rateLimits: true });
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  await loadSqlFixtures(ctx, tenant, other);
});
afterAll(async () => {
  await apps.close();
  await ctx?.close();
});

async function expectTooExpensive(app: FastifyInstance, query: string, variable: string, limit: 'time' | 'memory' | 'size') {
  const res = await sql(app, tenant, { query });
  expect(res.statusCode, res.body).toBe(422);
  const { error } = res.json();
  expect(error.code).toBe('QUERY_TOO_EXPENSIVE');
  expect(error.details).toMatchObject({ limit, variable });
  expect(error.message).toContain(variable);
}

describe('limits of one query', () => {
  it('answers 422 naming the limit hit', async () => {
    await expectTooExpensive(
      await appWith({ LOUPE_SQL_MAX_RESULT_ROWS: 3 }),
      'SELECT trace_id FROM spans',
      'LOUPE_SQL_MAX_RESULT_ROWS',
      'size',
    );
    await expectTooExpensive(
      await appWith({ LOUPE_SQL_MAX_RESULT_BYTES: 64 }),
      'SELECT repeat(trace_id, 100) FROM spans',
      'LOUPE_SQL_MAX_RESULT_BYTES',
      'size',
    );
    await expectTooExpensive(
      await appWith({ LOUPE_SQL_MAX_ROWS_TO_READ: 2 }),
      'SELECT count() FROM spans',
      'LOUPE_SQL_MAX_ROWS_TO_READ',
      'size',
    );
    await expectTooExpensive(
      await appWith({ LOUPE_SQL_MAX_BYTES_TO_READ: 100 }),
      'SELECT input FROM spans',
      'LOUPE_SQL_MAX_BYTES_TO_READ',
      'size',
    );
    await expectTooExpensive(
      await appWith({ LOUPE_SQL_MAX_MEMORY_BYTES: 1024 * 1024 }),
      'SELECT arrayMap(x -> range(100000), range(200)) FROM spans',
      'LOUPE_SQL_MAX_MEMORY_BYTES',
      'memory',
    );
    await expectTooExpensive(
      await appWith({ LOUPE_SQL_MAX_EXECUTION_MS: 100 }),
      'SELECT sum(sleepEachRow(0.2)) FROM spans',
      'LOUPE_SQL_MAX_EXECUTION_MS',
      'time',
    );
  });

  it('answers the same query within its limits', async () => {
    const res = await sql(await appWith({ LOUPE_SQL_MAX_RESULT_ROWS: 100 }), tenant, { query: 'SELECT trace_id FROM spans' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.rows).toHaveLength(8);
  });

  it('answers an export over a limit with 422 too', async () => {
    const app = await appWith({ LOUPE_SQL_MAX_RESULT_ROWS: 3 });
    const res = await sql(app, tenant, { query: 'SELECT trace_id FROM spans', format: 'csv' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('QUERY_TOO_EXPENSIVE');
  });
});

describe('limits per organization', () => {
  it('runs at most LOUPE_SQL_MAX_CONCURRENT queries of one organization at once; one waiting past LOUPE_SQL_MAX_WAIT_MS answers 429', async () => {
    const app = await appWith({ LOUPE_SQL_MAX_CONCURRENT: 1, LOUPE_SQL_MAX_WAIT_MS: 50 });
    const slow = { query: 'SELECT sum(sleepEachRow(0.1)) FROM spans' };
    const answers = await Promise.all([sql(app, tenant, slow), sql(app, tenant, slow), sql(app, other, { query: 'SELECT 1' })]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 429]);
    const refused = answers.find((a) => a.statusCode === 429)!;
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    expect(refused.json().error.details).toMatchObject({ limit: 'concurrency', variable: 'LOUPE_SQL_MAX_CONCURRENT', value: 1 });
    expect(refused.headers['retry-after']).toBe('1');
    // Once they have finished, the organization may query again.
    expect((await sql(app, tenant, { query: 'SELECT 1' })).statusCode).toBe(200);
  });

  it("counts every SQL request against the plan's rate limit", async () => {
    const first = await sql(ctx.app, tenant, { query: 'SELECT 1' });
    const second = await sql(ctx.app, tenant, { query: 'SELECT * FROM system.tables' });
    expect(first.headers['ratelimit-limit']).toBeDefined();
    expect(Number(second.headers['ratelimit-remaining'])).toBe(Number(first.headers['ratelimit-remaining']) - 1);
  });
});
