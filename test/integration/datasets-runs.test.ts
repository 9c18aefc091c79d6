import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('dataset runs', () => {
  it('creates, lists, reads, changes and deletes runs; a name is unique within its dataset', async () => {
    const id = await createDataset(ctx, tenant, { name: 'runs-crud' });
    const created = await send(ctx, tenant, 'POST', `/api/datasets/${id}/runs`, { name: 'v1', metadata: { promptVersion: 3, model: 'm' } });
    expect(created.statusCode).toBe(201);
    const run = created.json().data;
    expect(run).toMatchObject({ datasetId: id, name: 'v1', metadata: { promptVersion: 3, model: 'm' }, itemCount: 0 });
    expect(Date.parse(run.datasetVersion)).toBeLessThanOrEqual(Date.now());
    expect((await send(ctx, tenant, 'POST', `/api/datasets/${id}/runs`, { name: 'v1' })).statusCode).toBe(409);
    const other = await createDataset(ctx, tenant, { name: 'runs-crud-2' });
    expect((await send(ctx, tenant, 'POST', `/api/datasets/${other}/runs`, { name: 'v1' })).statusCode).toBe(201);
    expect((await send(ctx, tenant, 'GET', `/api/datasets/${id}/runs`)).json().data.map((r: { id: string }) => r.id)).toEqual([run.id]);
    expect((await send(ctx, tenant, 'GET', `/api/datasets/${other}/runs/${run.id}`)).statusCode).toBe(404);
    const changed = await send(ctx, tenant, 'PATCH', `/api/datasets/${id}/runs/${run.id}`, { description: 'first' });
    expect(changed.json().data).toMatchObject({ description: 'first', metadata: { promptVersion: 3, model: 'm' } });
    expect((await send(ctx, tenant, 'DELETE', `/api/datasets/${id}/runs/${run.id}`)).statusCode).toBe(200);
    expect((await send(ctx, tenant, 'GET', `/api/datasets/${id}/runs/${run.id}`)).statusCode).toBe(404);
  });

  it("records run items per item: those of items the dataset had at the run's version, over items archived since", async () => {
    const id = await createDataset(ctx, tenant, { name: 'runs-items' });
    await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, {
      items: [
        { id: 'a', input: 1 },
        { id: 'b', input: 2 },
        { id: 'gone', input: 3, status: 'archived' },
      ],
    });
    await sleep(5);
    const run = (await send(ctx, tenant, 'POST', `/api/datasets/${id}/runs`, { name: 'r' })).json().data;
    await sleep(5);
    // Changed after the run's version: b archived, c added.
    await send(ctx, tenant, 'POST', `/api/datasets/${id}/items/b/archive`);
    await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, { id: 'c', input: 4 });

    const res = await send(ctx, tenant, 'POST', `/api/datasets/${id}/runs/${run.id}/items`, {
      items: [
        { datasetItemId: 'a', traceId: 't-a', output: { answer: 'A' } },
        { datasetItemId: 'b', traceId: 't-b', spanId: 's-b', error: 'timeout' },
        { datasetItemId: 'c', traceId: 't-c' },
        { datasetItemId: 'missing', traceId: 't-m' },
        { datasetItemId: 'a', traceId: 't-a2' },
        { traceId: 'no-item' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect({ accepted: data.accepted, rejected: data.rejected }).toEqual({ accepted: 2, rejected: 4 });
    expect(data.errors.map((e: { index: number; path: string }) => [e.index, e.path])).toEqual([
      [2, 'items.2.datasetItemId'],
      [3, 'items.3.datasetItemId'],
      [4, 'items.4.datasetItemId'],
      [5, 'items.5.datasetItemId'],
    ]);
    // A re-send replaces the run item.
    await send(ctx, tenant, 'POST', `/api/datasets/${id}/runs/${run.id}/items`, {
      datasetItemId: 'a',
      traceId: 't-a',
      output: { answer: 'A2' },
    });
    const items = await send(ctx, tenant, 'GET', `/api/datasets/${id}/runs/${run.id}/items`);
    expect(
      items
        .json()
        .data.map((i: { datasetItemId: string; traceId: string; spanId: string | null; output: unknown; error: string | null }) => [
          i.datasetItemId,
          i.traceId,
          i.spanId,
          i.output,
          i.error,
        ]),
    ).toEqual([
      ['a', 't-a', null, { answer: 'A2' }, null],
      ['b', 't-b', 's-b', null, 'timeout'],
    ]);
    expect((await send(ctx, tenant, 'GET', `/api/datasets/${id}/runs/${run.id}`)).json().data.itemCount).toBe(2);
    // The items the run used are those at its version.
    const used = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items?asOf=${encodeURIComponent(run.datasetVersion)}`);
    expect(used.json().data.map((i: { id: string }) => i.id)).toEqual(['a', 'b']);
  });

  it('another workspace can neither see, write nor delete runs', async () => {
    const other = await ctx.tenant();
    const id = await createDataset(ctx, tenant, { name: 'runs-private' });
    await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, { id: 'a', input: 1 });
    const run = (await send(ctx, tenant, 'POST', `/api/datasets/${id}/runs`, { name: 'r' })).json().data;
    expect((await send(ctx, other, 'GET', `/api/datasets/${id}/runs`)).statusCode).toBe(404);
    expect((await send(ctx, other, 'POST', `/api/datasets/${id}/runs`, { name: 'x' })).statusCode).toBe(404);
    expect((await send(ctx, other, 'GET', `/api/datasets/${id}/runs/${run.id}`)).statusCode).toBe(404);
    expect((await send(ctx, other, 'GET', `/api/datasets/${id}/runs/${run.id}/items`)).statusCode).toBe(404);
    expect(
      (await send(ctx, other, 'POST', `/api/datasets/${id}/runs/${run.id}/items`, { datasetItemId: 'a', traceId: 't' })).statusCode,
    ).toBe(404);
    expect((await send(ctx, other, 'DELETE', `/api/datasets/${id}/runs/${run.id}`)).statusCode).toBe(404);
    expect((await send(ctx, tenant, 'GET', `/api/datasets/${id}/runs/${run.id}`)).statusCode).toBe(200);
  });
});
