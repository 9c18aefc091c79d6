import { afterAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { get } from './traces-fixtures.js';
import { seedSessions, window } from './traces-sessions-fixtures.js';

/**
 * The per-query limits (LOUPE_QUERY_MAX_MEMORY_BYTES, LOUPE_QUERY_MAX_EXECUTION_MS) set tiny: every
 * windowed read answers 422 QUERY_TOO_EXPENSIVE telling how to narrow it, never 500; the ingest
 * (not a read) is not limited.
 */
let ctx: TestContext;
afterAll(async () => {
  await ctx?.close();
});

const reads = [
  `/api/traces?${window}&sort=-costUsd`,
  `/api/sessions?${window}`,
  `/api/sessions/s1?${window}`,
  `/api/users?${window}`,
  `/api/users/u1?${window}`,
  '/api/traces/stats?groupBy=user&from=2025-03-01T00:00:00Z&to=2025-03-02T00:00:00Z',
  '/api/traces/analytics?startAfter=2025-03-01T00:00:00Z&startBefore=2025-03-02T00:00:00Z',
];

async function expectTooExpensive(tenant: Tenant, limit: string) {
  for (const url of reads) {
    const res = await get(ctx, tenant, url);
    expect({ url, status: res.statusCode, code: res.json().error?.code }).toEqual({ url, status: 422, code: 'QUERY_TOO_EXPENSIVE' });
    expect(res.json().error.message).toContain('Narrow it');
    expect(res.json().error.details).toEqual({ limit });
  }
}

describe('per-query limits', () => {
  it('a memory limit answers 422 QUERY_TOO_EXPENSIVE', async () => {
    ctx = await createTestContext({ env: { LOUPE_QUERY_MAX_MEMORY_BYTES: '10000' } });
    const tenant = await ctx.tenant();
    await seedSessions(ctx, tenant, 'mem');
    await expectTooExpensive(tenant, 'memory');
    await ctx.close();
  });

  it('a time limit answers 422 QUERY_TOO_EXPENSIVE', async () => {
    ctx = await createTestContext({ env: { LOUPE_QUERY_MAX_EXECUTION_MS: '1' } });
    const tenant = await ctx.tenant();
    await seedSessions(ctx, tenant, 'time');
    await expectTooExpensive(tenant, 'time');
  });
});
