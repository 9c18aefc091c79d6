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

describe('datasets CRUD', () => {
  it('creates, lists, reads, renames and deletes; a name is unique in the workspace', async () => {
    const created = await send(ctx, tenant, 'POST', '/api/datasets', { name: 'qa', description: 'questions', metadata: { team: 'a' } });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id;
    expect(created.json().data).toMatchObject({ name: 'qa', description: 'questions', metadata: { team: 'a' }, inputSchema: null });
    expect((await send(ctx, tenant, 'POST', '/api/datasets', { name: 'qa' })).statusCode).toBe(409);
    const list = await send(ctx, tenant, 'GET', '/api/datasets');
    expect(list.json().data.map((d: { name: string }) => d.name)).toContain('qa');
    const renamed = await send(ctx, tenant, 'PATCH', `/api/datasets/${id}`, { name: 'qa-2' });
    expect(renamed.json().data).toMatchObject({ name: 'qa-2', description: 'questions' });
    expect((await send(ctx, tenant, 'DELETE', `/api/datasets/${id}`)).statusCode).toBe(200);
    expect((await send(ctx, tenant, 'GET', `/api/datasets/${id}`)).statusCode).toBe(404);
  });

  it('refuses a schema that is no JSON Schema, naming the path inside it', async () => {
    const res = await send(ctx, tenant, 'POST', '/api/datasets', { name: 'bad-schema', inputSchema: { type: 'strin' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues[0].path).toBe('body.inputSchema.type');
  });
});

describe('dataset items', () => {
  it('checks items against the schemas: each bad item named by index and path, the good ones stored', async () => {
    const id = await createDataset(ctx, tenant, {
      name: 'schema-checked',
      inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
      expectedOutputSchema: { type: 'string' },
    });
    const res = await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, {
      items: [
        { id: 'ok', input: { question: 'why?' }, expectedOutput: 'because' },
        { id: 'no-question', input: { q: 1 } },
        { id: 'wrong-type', input: { question: 3 } },
        { id: 'bad-expected', input: { question: 'x' }, expectedOutput: 7 },
        { id: 'no-input' },
        { id: 'ok', input: { question: 'twice' } },
        { input: { question: 'generated id' }, status: 'archived' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect({ accepted: data.accepted, rejected: data.rejected }).toEqual({ accepted: 2, rejected: 5 });
    expect(data.errors.map((e: { index: number; path: string }) => [e.index, e.path])).toEqual([
      [1, 'items.1.input.question'],
      [2, 'items.2.input.question'],
      [3, 'items.3.expectedOutput'],
      [4, 'items.4.input'],
      [5, 'items.5.id'],
    ]);
    expect(data.ids[0]).toBe('ok');
    expect(data.ids[6]).toEqual(expect.any(String));
    const active = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items`);
    expect(active.json().data.map((i: { id: string }) => i.id)).toEqual(['ok']);
    const all = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items?status=all`);
    expect(all.json().data).toHaveLength(2);
  });

  it('refuses more than 1,000 items in one request', async () => {
    const id = await createDataset(ctx, tenant, { name: 'too-many' });
    const items = Array.from({ length: 1001 }, (_, i) => ({ input: i }));
    const res = await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, { items });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues[0].path).toBe('body.items');
  });

  it('upserts by id: a re-send is a new version; asOf answers the items as they were', async () => {
    const id = await createDataset(ctx, tenant, { name: 'versioned' });
    const first = await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, {
      items: [
        { id: 'a', input: 'a1', expectedOutput: 'A1' },
        { id: 'b', input: 'b1' },
      ],
    });
    const v1 = first.json().data.version as string;
    await sleep(5);
    const second = await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, {
      items: [
        { id: 'a', input: 'a2' },
        { id: 'c', input: 'c1' },
      ],
    });
    const v2 = second.json().data.version as string;
    expect(Date.parse(v2)).toBeGreaterThan(Date.parse(v1));
    await sleep(5);
    expect((await send(ctx, tenant, 'POST', `/api/datasets/${id}/items/b/archive`)).json().data.status).toBe('archived');

    const page = async (query: string) =>
      (await send(ctx, tenant, 'GET', `/api/datasets/${id}/items?${query}`))
        .json()
        .data.map((i: { id: string; input: unknown }) => [i.id, i.input]);
    expect(await page('')).toEqual([
      ['a', 'a2'],
      ['c', 'c1'],
    ]);
    expect(await page(`asOf=${encodeURIComponent(v1)}`)).toEqual([
      ['a', 'a1'],
      ['b', 'b1'],
    ]);
    expect(await page(`asOf=${encodeURIComponent(v2)}`)).toEqual([
      ['a', 'a2'],
      ['b', 'b1'],
      ['c', 'c1'],
    ]);
    expect(await page(`asOf=${encodeURIComponent(new Date(Date.parse(v1) - 1000).toISOString())}`)).toEqual([]);

    const oneThen = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items/a?asOf=${encodeURIComponent(v1)}`);
    expect(oneThen.json().data).toMatchObject({ id: 'a', input: 'a1', expectedOutput: 'A1', validFrom: v1 });
    const now = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items/a`);
    expect(now.json().data).toMatchObject({ input: 'a2', expectedOutput: null, createdAt: oneThen.json().data.createdAt, validTo: null });
    const history = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items/a/versions`);
    expect(history.json().data.map((v: { input: string; validTo: string | null }) => [v.input, v.validTo])).toEqual([
      ['a1', v2],
      ['a2', null],
    ]);
  });

  it('pages by cursor through every item once', async () => {
    const id = await createDataset(ctx, tenant, { name: 'paged' });
    const ids = Array.from({ length: 25 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
    await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, { items: ids.map((itemId) => ({ id: itemId, input: itemId })) });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...res.json().data.map((i: { id: string }) => i.id));
      cursor = res.json().meta.pagination.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const bad = await send(ctx, tenant, 'GET', `/api/datasets/${id}/items?cursor=!!`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0].path).toBe('query.cursor');
  });
});

describe('workspace isolation', () => {
  it('another workspace can neither read, list, write nor delete a dataset or its items', async () => {
    const other = await ctx.tenant();
    const id = await createDataset(ctx, tenant, { name: 'private' });
    await send(ctx, tenant, 'POST', `/api/datasets/${id}/items`, { id: 'secret', input: 's' });
    expect((await send(ctx, other, 'GET', `/api/datasets/${id}`)).statusCode).toBe(404);
    expect((await send(ctx, other, 'GET', `/api/datasets/${id}/items`)).statusCode).toBe(404);
    expect((await send(ctx, other, 'GET', `/api/datasets/${id}/items/secret`)).statusCode).toBe(404);
    expect((await send(ctx, other, 'POST', `/api/datasets/${id}/items`, { id: 'x', input: 1 })).statusCode).toBe(404);
    expect((await send(ctx, other, 'POST', `/api/datasets/${id}/items/secret/archive`)).statusCode).toBe(404);
    expect((await send(ctx, other, 'DELETE', `/api/datasets/${id}`)).statusCode).toBe(404);
    expect((await send(ctx, other, 'GET', '/api/datasets')).json().data).toEqual([]);
    // The same name is free in another workspace.
    expect((await send(ctx, other, 'POST', '/api/datasets', { name: 'private' })).statusCode).toBe(201);
    expect((await send(ctx, tenant, 'GET', `/api/datasets/${id}/items/secret`)).json().data.input).toBe('s');
  });
});
