import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { get, post, span, trace, uniqueId } from './traces-fixtures.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const at = (minute: number) => `2025-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const ids = (res: { json(): { data: { traceId: string }[] } }) => res.json().data.map((t) => t.traceId);

/** Five traces: t0 (oldest) … t4 (newest), with different sessions, sources, environments and states. */
async function seed(tenant: Tenant) {
  const made = [
    { sessionId: 'sa', source: 'sdk', environment: 'production' },
    { sessionId: 'sa', source: 'otel', environment: 'staging' },
    { sessionId: 'sb', source: 'sdk', environment: 'production', status: 'error' },
    { sessionId: 'sb', source: 'manual', environment: 'development', running: true },
    { source: 'sdk', environment: 'production' },
  ].map((t, minute) => ({
    traceId: `t${minute}-${uniqueId('r')}`,
    source: t.source,
    environment: t.environment,
    ...(t.sessionId && { sessionId: t.sessionId }),
    spans: [
      span({
        spanId: 'root',
        startTime: at(minute),
        endTime: at(minute + 1),
        status: t.status ?? 'ok',
        ...(t.running && { parentSpanId: 'missing-root' }),
        input: { text: `secret input ${minute}` },
      }),
    ],
  }));
  expect((await post(ctx, tenant, made)).json().data.accepted).toBe(5);
  return made.map((t) => t.traceId);
}

describe('GET /api/traces', () => {
  let tenant: Tenant;
  let t: string[];
  beforeAll(async () => {
    tenant = await ctx.tenant();
    t = await seed(tenant);
  });

  it('lists newest first with slim items and total', async () => {
    const res = await get(ctx, tenant, '/api/traces');
    expect(res.statusCode).toBe(200);
    expect(ids(res)).toEqual([...t].reverse());
    expect(res.json().meta.pagination).toEqual({ limit: 20, offset: 0, total: 5, hasMore: false, nextCursor: null });
    const item = res.json().data[0];
    expect(item).toMatchObject({
      traceId: t[4],
      status: 'completed',
      traceKind: 'tool',
      spanCount: 1,
      errorCount: 0,
      sessionId: null,
      name: null,
    });
    expect(item.spans).toBeUndefined();
    expect(JSON.stringify(res.json())).not.toContain('secret input');
  });

  it('applies every filter', async () => {
    const cases: [string, string[]][] = [
      ['sessionId=sa', [t[1]!, t[0]!]],
      ['status=error', [t[2]!]],
      ['status=running', [t[3]!]],
      ['status=completed', [t[4]!, t[1]!, t[0]!]],
      ['source=sdk', [t[4]!, t[2]!, t[0]!]],
      ['environment=production', [t[4]!, t[2]!, t[0]!]],
      [`startAfter=${at(2)}`, [t[4]!, t[3]!]],
      [`startBefore=${at(2)}`, [t[1]!, t[0]!]],
      [`startAfter=${at(0)}&startBefore=${at(4)}&source=sdk`, [t[2]!]],
    ];
    for (const [query, expected] of cases) {
      const res = await get(ctx, tenant, `/api/traces?${query}`);
      expect({ query, ids: ids(res), total: res.json().meta.pagination.total }).toEqual({ query, ids: expected, total: expected.length });
    }
  });

  it('pages with limit and offset, ties broken by traceId', async () => {
    const page = await get(ctx, tenant, '/api/traces?limit=2&offset=2');
    expect(ids(page)).toEqual([t[2], t[1]]);
    expect(page.json().meta.pagination).toEqual({ limit: 2, offset: 2, total: 5, hasMore: true, nextCursor: expect.any(String) });
    const last = await get(ctx, tenant, '/api/traces?limit=2&offset=4');
    expect(last.json().meta.pagination).toEqual({ limit: 2, offset: 4, total: 5, hasMore: false, nextCursor: null });
    const exact = await get(ctx, tenant, '/api/traces?limit=5');
    expect(exact.json().meta.pagination).toEqual({ limit: 5, offset: 0, total: 5, hasMore: false, nextCursor: null });
    expect(ids(exact)).toHaveLength(5);
    const short = await get(ctx, tenant, '/api/traces?limit=4');
    expect(short.json().meta.pagination).toEqual({ limit: 4, offset: 0, total: 5, hasMore: true, nextCursor: expect.any(String) });
    expect(ids(short)).toHaveLength(4);
    // A page past the end still counts the matching traces.
    const past = await get(ctx, tenant, '/api/traces?limit=2&offset=10');
    expect(past.json()).toMatchObject({ data: [], meta: { pagination: { limit: 2, offset: 10, total: 5, hasMore: false } } });
    const none = await get(ctx, tenant, '/api/traces?sessionId=no-such-session');
    expect(none.json()).toMatchObject({ data: [], meta: { pagination: { total: 0, hasMore: false } } });

    const twins = await ctx.tenant();
    await post(ctx, twins, [trace({ traceId: 'b-same' }), trace({ traceId: 'a-same' })]);
    expect(ids(await get(ctx, twins, '/api/traces'))).toEqual(['a-same', 'b-same']);
  });

  it('rejects bad query parameters', async () => {
    for (const query of ['limit=0', 'limit=101', 'offset=-1', 'status=done', 'startAfter=yesterday', 'include=events', 'bogus=1']) {
      const res = await get(ctx, tenant, `/api/traces?${query}`);
      expect({ query, status: res.statusCode }).toEqual({ query, status: 400 });
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('adds the spans of each item with include=spans', async () => {
    const res = await get(ctx, tenant, '/api/traces?include=spans&limit=2');
    const [first, second] = res.json().data;
    expect(first.spans).toEqual([expect.objectContaining({ spanId: 'root', input: { text: 'secret input 4' } })]);
    expect(second.spans[0].parentSpanId).toBe('missing-root');
  });
});

describe('GET and DELETE /api/traces/:id', () => {
  it('answers 404 for an unknown trace and 400 for a bad id', async () => {
    const tenant = await ctx.tenant();
    expect((await get(ctx, tenant, '/api/traces/nope')).statusCode).toBe(404);
    expect((await get(ctx, tenant, '/api/traces/bad%20id')).statusCode).toBe(400);
    const del = await ctx.app.inject({ method: 'DELETE', url: '/api/traces/nope', headers: tenant.headers });
    expect(del.statusCode).toBe(404);
    expect(del.json().error.code).toBe('NOT_FOUND');
  });

  it('deletes a trace from every read, and a re-send creates it anew', async () => {
    const tenant = await ctx.tenant();
    const body = trace({ name: 'old', spans: [span({ spanId: 'r' }), span({ spanId: 'c', parentSpanId: 'r' })] });
    await post(ctx, tenant, [body]);
    const del = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${body.traceId}`, headers: tenant.headers });
    expect(del.statusCode).toBe(200);
    expect(del.json().data).toEqual({ traceId: body.traceId, deleted: true });
    expect((await get(ctx, tenant, `/api/traces/${body.traceId}`)).statusCode).toBe(404);
    expect((await get(ctx, tenant, '/api/traces')).json().meta.pagination.total).toBe(0);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${body.traceId}`, headers: tenant.headers })).statusCode).toBe(404);
    const views = await ctx.clickhouse.query({
      query:
        'SELECT (SELECT count() FROM spans_latest WHERE workspace_id = {w:String}) AS spans, (SELECT count() FROM traces_latest WHERE workspace_id = {w:String}) AS traces',
      query_params: { w: tenant.workspaceId },
      format: 'JSONEachRow',
    });
    expect(await views.json()).toEqual([{ spans: 0, traces: 0 }]);

    await post(ctx, tenant, [{ traceId: body.traceId, source: 'sdk', spans: [span({ spanId: 'c2' })] }]);
    const again = (await get(ctx, tenant, `/api/traces/${body.traceId}`)).json().data;
    expect(again).toMatchObject({ name: null, spanCount: 1, status: 'completed' });
    expect(again.spans.map((s: { spanId: string }) => s.spanId)).toEqual(['c2']);
  });
});

describe('workspace isolation', () => {
  it('another workspace cannot read, list, delete or overwrite a trace', async () => {
    const owner = await ctx.tenant();
    const other = await ctx.tenant();
    const body = trace({ name: 'mine' });
    await post(ctx, owner, [body]);
    expect((await get(ctx, other, `/api/traces/${body.traceId}`)).statusCode).toBe(404);
    expect((await get(ctx, other, '/api/traces?include=spans')).json().data).toEqual([]);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${body.traceId}`, headers: other.headers })).statusCode).toBe(404);
    await post(ctx, other, [{ ...body, name: 'theirs' }]);
    expect((await get(ctx, owner, `/api/traces/${body.traceId}`)).json().data.name).toBe('mine');
    expect((await get(ctx, other, `/api/traces/${body.traceId}`)).json().data.name).toBe('theirs');
  });

  it('requires a credential', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/traces' });
    expect(res.statusCode).toBe(401);
  });
});
