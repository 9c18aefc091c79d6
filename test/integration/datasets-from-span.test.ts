import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, trace, uniqueId } from './traces-fixtures.js';
import { createDataset, send } from './datasets-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

describe('POST /api/datasets/:id/items/from-span', () => {
  it("adds a span: its input the item's input, its output the expected output, the item names its source", async () => {
    const traceId = uniqueId('t');
    const spanId = uniqueId('s');
    const ingest = await post(ctx, tenant, [
      trace({ traceId, spans: [span({ spanId, input: { text: 'capital of France?' }, output: { text: 'Paris' } })] }),
    ]);
    expect(ingest.statusCode).toBeLessThan(300);
    expect(ingest.json().data.rejected).toBe(0);
    const id = await createDataset(ctx, tenant, { name: 'from-span' });
    const res = await send(ctx, tenant, 'POST', `/api/datasets/${id}/items/from-span`, { traceId, spanId, id: 'paris' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({
      id: 'paris',
      input: { text: 'capital of France?' },
      expectedOutput: { text: 'Paris' },
      sourceTraceId: traceId,
      sourceSpanId: spanId,
      status: 'active',
    });
    const listed = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items`);
    expect(listed.json().data.map((i: { id: string }) => i.id)).toEqual(['paris']);
  });

  it("refuses a span that does not fit the dataset's schema, naming the path, and an unknown or another workspace's span", async () => {
    const traceId = uniqueId('t');
    const spanId = uniqueId('s');
    await post(ctx, tenant, [trace({ traceId, spans: [span({ spanId, input: { text: 'hello' }, output: { text: 'x' } })] })]);
    const strict = await createDataset(ctx, tenant, {
      name: 'from-span-strict',
      inputSchema: { type: 'object', required: ['messages'] },
    });
    const bad = await send(ctx, tenant, 'POST', `/api/datasets/${strict}/items/from-span`, { traceId, spanId });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0].path).toBe('span.input.messages');
    expect((await send(ctx, tenant, 'GET', `/api/datasets/${strict}/items?status=all`)).json().data).toEqual([]);

    const open = await createDataset(ctx, tenant, { name: 'from-span-open' });
    expect((await send(ctx, tenant, 'POST', `/api/datasets/${open}/items/from-span`, { traceId, spanId: 'nope' })).statusCode).toBe(404);
    const other = await ctx.tenant();
    const theirs = await createDataset(ctx, other, { name: 'theirs' });
    expect((await send(ctx, other, 'POST', `/api/datasets/${theirs}/items/from-span`, { traceId, spanId })).statusCode).toBe(404);
  });
});
