import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { sqlRows } from './sql-fixtures.js';

/**
 * POST /api/sql reads the text index through the `spans` view's `search_text` (clickhouse/0019):
 * the words are found in a span's live version only, never in another workspace, and the
 * engine's plan reads the index.
 */
let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
const found = uniqueId('found');
const rewritten = uniqueId('rewritten');

const traceOf = (traceId: string, output: string) => ({
  traceId,
  source: 'sdk',
  spans: [span({ spanId: 'root', startTime: '2025-06-01T10:00:00.000Z', endTime: '2025-06-01T10:00:01.000Z', output: { text: output } })],
});

beforeAll(async () => {
  ctx = await createTestContext({ ingestAck: 'store' });
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  expect(
    (await post(ctx, tenant, [traceOf(found, 'The Refund policy:\nquokkaword applies'), traceOf(rewritten, 'quokkaword once')])).statusCode,
  ).toBe(200);
  // The second trace's span sent again without the word: its older version must not match.
  expect((await post(ctx, tenant, [traceOf(rewritten, 'nothing now')])).statusCode).toBe(200);
  expect((await post(ctx, other, [traceOf(uniqueId('foreign'), 'quokkaword refund policy')])).statusCode).toBe(200);
});
afterAll(async () => {
  await ctx?.close();
});

describe('POST /api/sql with the text index', () => {
  it("finds the words of a span's live version in the caller's workspace only", async () => {
    const ids = async (condition: string) =>
      (await sqlRows(ctx.app, tenant, `SELECT trace_id FROM spans WHERE ${condition} ORDER BY trace_id`)).map((row) => row.trace_id);
    expect(await ids(`hasAllTokens(search_text, ['quokkaword'])`)).toEqual([found]);
    expect(await ids(`hasAllTokens(search_text, ['refund', 'policy', 'quokkaword'])`)).toEqual([found]);
    expect(await ids(`hasAnyTokens(search_text, ['nosuchword', 'quokkaword'])`)).toEqual([found]);
    expect(await ids(`hasAllTokens(search_text, ['quokkaword', 'nosuchword'])`)).toEqual([]);
  });

  it('reads only the granules the index names', async () => {
    const result = await ctx.clickhouse.query({
      query: `EXPLAIN indexes = 1 SELECT trace_id FROM sql_spans(workspace = {workspace:String}) WHERE hasAllTokens(search_text, ['quokkaword'])`,
      query_params: { workspace: tenant.workspaceId },
      format: 'JSONEachRow',
    });
    const plan = (await result.json<{ explain: string }>()).map((row) => row.explain.trim());
    const at = plan.indexOf('Name: idx_detail_text');
    expect(at, plan.join('\n')).toBeGreaterThan(0);
    expect(plan.slice(at, at + 6).join('\n')).toMatch(/tokens: \["quokkaword"\]/);
  });
});
