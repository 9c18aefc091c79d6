import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { postScores } from './scores-fixtures.js';
import { createDataset, send } from './datasets-fixtures.js';
import { sqlRows } from './sql-fixtures.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** A dataset of `items` items, a run, per item a trace with a model span scored `quality` = the item's number. */
async function seed(who: Tenant, model: string, items: number, scoreOffset = 0) {
  const datasetId = await createDataset(ctx, who, { name: uniqueId('ds') });
  const ids = Array.from({ length: items }, (_, i) => `item-${i}`);
  expect(
    (await send(ctx, who, 'POST', `/api/datasets/${datasetId}/items`, { items: ids.map((id) => ({ id, input: { id } })) })).statusCode,
  ).toBe(200);
  const run = (await send(ctx, who, 'POST', `/api/datasets/${datasetId}/runs`, { name: 'baseline' })).json().data;
  const traceIds = ids.map((id) => uniqueId(`t-${id}`));
  await post(
    ctx,
    who,
    traceIds.map((traceId) => ({ traceId, source: 'sdk', spans: [span({ spanId: 'llm', kind: 'llm.chat', model })] })),
  );
  await postScores(ctx, who, {
    scores: traceIds.map((traceId, i) => ({ name: 'quality', value: i + scoreOffset, traceId, spanId: 'llm' })),
  });
  const runItems = ids.map((datasetItemId, i) => ({ datasetItemId, traceId: traceIds[i], spanId: 'llm', output: { answer: i } }));
  const written = await send(ctx, who, 'POST', `/api/datasets/${datasetId}/runs/${run.id}/items`, { items: runItems });
  expect(written.json().data.accepted).toBe(items);
  return { datasetId, runId: run.id as string, traceIds };
}

const joined = `SELECT ri.dataset_item_id AS item, ri.run_name AS run, sp.model AS model, sc.value AS quality, ri.output AS output
  FROM dataset_run_items AS ri
  INNER JOIN spans AS sp ON sp.trace_id = ri.trace_id AND sp.span_id = ri.span_id
  INNER JOIN scores AS sc ON sc.trace_id = ri.trace_id AND sc.span_id = ri.span_id
  WHERE sc.name = 'quality' ORDER BY item`;

describe('the dataset_run_items view of POST /api/sql', () => {
  it("answers a workspace's run items joined with its spans and scores, never another workspace's", async () => {
    const tenant = await ctx.tenant();
    const other = await ctx.tenant();
    const mine = await seed(tenant, 'gpt-4o', 3);
    await seed(other, 'claude', 2, 100);

    expect(await sqlRows(ctx.app, tenant, joined)).toEqual([
      { item: 'item-0', run: 'baseline', model: 'gpt-4o', quality: 0, output: '{"answer": 0}' },
      { item: 'item-1', run: 'baseline', model: 'gpt-4o', quality: 1, output: '{"answer": 1}' },
      { item: 'item-2', run: 'baseline', model: 'gpt-4o', quality: 2, output: '{"answer": 2}' },
    ]);
    expect(await sqlRows(ctx.app, other, 'SELECT dataset_item_id, run_id FROM dataset_run_items ORDER BY dataset_item_id')).toEqual([
      { dataset_item_id: 'item-0', run_id: expect.not.stringMatching(mine.runId) },
      { dataset_item_id: 'item-1', run_id: expect.not.stringMatching(mine.runId) },
    ]);

    // A re-sent run item replaces its row; a deleted run's items disappear.
    const resent = await send(ctx, tenant, 'POST', `/api/datasets/${mine.datasetId}/runs/${mine.runId}/items`, {
      datasetItemId: 'item-1',
      traceId: mine.traceIds[1],
      error: 'timed out',
    });
    expect(resent.json().data.accepted).toBe(1);
    expect(
      await sqlRows(
        ctx.app,
        tenant,
        "SELECT dataset_item_id, span_id, output, error FROM dataset_run_items WHERE dataset_item_id = 'item-1'",
      ),
    ).toEqual([{ dataset_item_id: 'item-1', span_id: '', output: '', error: 'timed out' }]);
    expect((await send(ctx, tenant, 'DELETE', `/api/datasets/${mine.datasetId}/runs/${mine.runId}`)).statusCode).toBe(200);
    expect(await sqlRows(ctx.app, tenant, 'SELECT count() AS n FROM dataset_run_items')).toEqual([{ n: 0 }]);
    expect(await sqlRows(ctx.app, other, 'SELECT count() AS n FROM dataset_run_items')).toEqual([{ n: 2 }]);
  });

  it("hides a deleted dataset's run items", async () => {
    const tenant = await ctx.tenant();
    const { datasetId } = await seed(tenant, 'gpt-4o', 2);
    expect(await sqlRows(ctx.app, tenant, 'SELECT count() AS n FROM dataset_run_items')).toEqual([{ n: 2 }]);
    expect((await send(ctx, tenant, 'DELETE', `/api/datasets/${datasetId}`)).statusCode).toBe(200);
    expect(await sqlRows(ctx.app, tenant, 'SELECT count() AS n FROM dataset_run_items')).toEqual([{ n: 0 }]);
  });

  it('keeps a write the engine missed and sends it with the next one', async () => {
    const tenant = await ctx.tenant();
    const { datasetId, runId, traceIds } = await seed(tenant, 'gpt-4o', 3);
    // The same stores, but an engine that refuses every connection: PostgreSQL commits, the engine's write fails.
    const unreachable = createClient({ url: 'http://127.0.0.1:9', request_timeout: 2000 });
    const broken = await buildApp({ config: ctx.config, sql: ctx.sql, clickhouse: unreachable });
    try {
      const answered = await broken.inject({
        method: 'POST',
        url: `/api/datasets/${datasetId}/runs/${runId}/items`,
        headers: tenant.headers,
        payload: { datasetItemId: 'item-0', traceId: traceIds[0], output: 'while the engine was away' },
      });
      expect(answered.statusCode).toBe(200);
      expect(answered.json().data.accepted).toBe(1);
    } finally {
      await broken.close();
      await unreachable.close();
    }
    const output = "SELECT dataset_item_id, output FROM dataset_run_items WHERE dataset_item_id IN ('item-0', 'item-2') ORDER BY 1";
    expect(await sqlRows(ctx.app, tenant, output)).toEqual([
      { dataset_item_id: 'item-0', output: '{"answer": 0}' },
      { dataset_item_id: 'item-2', output: '{"answer": 2}' },
    ]);
    await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/runs/${runId}/items`, {
      datasetItemId: 'item-2',
      traceId: traceIds[2],
      output: 'next',
    });
    expect(await sqlRows(ctx.app, tenant, output)).toEqual([
      { dataset_item_id: 'item-0', output: '"while the engine was away"' },
      { dataset_item_id: 'item-2', output: '"next"' },
    ]);
  });
});
