import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/app.js';
import { post, span } from './traces-fixtures.js';
import { postScores } from './scores-fixtures.js';
import { sqlRows } from './sql-fixtures.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

describe('the scores view of POST /api/sql', () => {
  it("reads the workspace's live scores, joins them to spans, and never another workspace's", async () => {
    const tenant = await ctx.tenant();
    const other = await ctx.tenant();
    for (const who of [tenant, other]) {
      await post(ctx, who, [
        {
          traceId: 'sql-t',
          source: 'sdk',
          spans: [span({ spanId: 'a', model: 'gpt-4o', kind: 'llm.chat' }), span({ spanId: 'b', model: 'claude', kind: 'llm.chat' })],
        },
      ]);
    }
    await postScores(ctx, tenant, {
      scores: [
        { id: 'x1', name: 'q', value: 1, traceId: 'sql-t', spanId: 'a' },
        { id: 'x2', name: 'q', value: 3, traceId: 'sql-t', spanId: 'a' },
        { id: 'x3', name: 'q', value: 10, traceId: 'sql-t', spanId: 'b' },
        { id: 'x4', name: 'gone', value: 1, traceId: 'sql-t' },
      ],
    });
    await postScores(ctx, tenant, { id: 'x2', name: 'q', value: 5, traceId: 'sql-t', spanId: 'a' });
    await ctx.app.inject({ method: 'DELETE', url: '/api/scores/x4', headers: tenant.headers });
    await postScores(ctx, other, { id: 'x9', name: 'q', value: 99, traceId: 'sql-t', spanId: 'a' });

    expect(await sqlRows(ctx.app, tenant, 'SELECT id, value FROM scores ORDER BY id')).toEqual([
      { id: 'x1', value: 1 },
      { id: 'x2', value: 5 },
      { id: 'x3', value: 10 },
    ]);
    const joined = await sqlRows(
      ctx.app,
      tenant,
      `SELECT sp.model, count() AS n, avg(sc.value) AS mean
       FROM scores AS sc INNER JOIN spans AS sp ON sc.trace_id = sp.trace_id AND sc.span_id = sp.span_id
       WHERE sc.name = 'q' GROUP BY sp.model ORDER BY sp.model`,
    );
    expect(joined).toEqual([
      { model: 'claude', n: 1, mean: 10 },
      { model: 'gpt-4o', n: 2, mean: 3 },
    ]);
    expect(await sqlRows(ctx.app, other, 'SELECT id, value FROM scores')).toEqual([{ id: 'x9', value: 99 }]);
  });
});
