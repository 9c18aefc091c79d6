import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { loadSqlFixtures, sql, sqlRows } from './sql-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  await loadSqlFixtures(ctx, tenant, other);
});
afterAll(async () => {
  await ctx?.close();
});

describe('POST /api/sql', () => {
  it('answers columns with their types, rows and statistics', async () => {
    const res = await sql(ctx.app, tenant, { query: 'SELECT trace_id, status, span_count FROM traces ORDER BY trace_id' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.columns).toEqual([
      { name: 'trace_id', type: 'String' },
      { name: 'status', type: 'LowCardinality(String)' },
      { name: 'span_count', type: 'UInt32' },
    ]);
    expect(body.data.rows).toEqual([['t1', 'completed', 3], ['t2', 'error', 3], ['t3', 'completed', 1], ['t4', 'running', 1]]);
    expect(body.meta.rowCount).toBe(4);
    expect(body.meta.statistics.rowsRead).toBeGreaterThan(0);
    expect(body.meta.statistics.bytesRead).toBeGreaterThan(0);
    expect(body.meta.statistics.elapsedMs).toBeGreaterThanOrEqual(0);
  });
});
