import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/app.js';
import { get, post, span, trace, uniqueId } from './traces-fixtures.js';

/**
 * The fields of migration 0004: usage details, time to first token and the prompt version on
 * spans; service, user and tags on traces, copied onto their span rows.
 */

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const generation = {
  kind: 'llm.chat',
  model: 'gpt-4o',
  provider: 'openai',
  inputTokens: 1200,
  outputTokens: 300,
  totalTokens: 1500,
  cacheReadTokens: 1000,
  cacheWriteTokens: 100,
  reasoningTokens: 120,
  ttftMs: 412.5,
  promptName: 'support-agent',
  promptVersion: '1.2.0',
};

async function item(tenant: Awaited<ReturnType<TestContext['tenant']>>, traceId: string) {
  const res = await get(ctx, tenant, `/api/traces/${traceId}`);
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

describe('trace identity and usage details', () => {
  it('round-trips usage details, ttft and the prompt version of a span', async () => {
    const tenant = await ctx.tenant();
    const root = span({ spanId: 'root', ...generation });
    const t = trace({ spans: [root] });
    expect((await post(ctx, tenant, [t])).json().data.accepted).toBe(1);
    const detail = await item(tenant, t.traceId);
    expect(detail.spans[0]).toMatchObject(generation);
    // No cost sent: priced at ingest (test/integration/cost-ingest.test.ts).
    expect(Object.keys(detail.spans[0])).toEqual([
      'spanId',
      'name',
      'kind',
      'startTime',
      'endTime',
      'durationMs',
      'model',
      'provider',
      'inputTokens',
      'outputTokens',
      'totalTokens',
      'cacheReadTokens',
      'cacheWriteTokens',
      'reasoningTokens',
      'costUsd',
      'costSource',
      'pricing',
      'ttftMs',
      'status',
      'promptName',
      'promptVersion',
    ]);
  });

  it('stores service, user and tags on the summary and on every span row', async () => {
    const tenant = await ctx.tenant();
    const traceId = uniqueId('ident');
    const sent = { traceId, source: 'sdk', service: 'checkout-api', userId: 'user-42', tags: ['beta', 'eu'], spans: [span(), span()] };
    expect((await post(ctx, tenant, [sent])).json().data.accepted).toBe(1);
    expect(await item(tenant, traceId)).toMatchObject({ service: 'checkout-api', userId: 'user-42', tags: ['beta', 'eu'] });
    const list = (await get(ctx, tenant, '/api/traces')).json().data;
    expect(list[0]).toMatchObject({ traceId, service: 'checkout-api', userId: 'user-42', tags: ['beta', 'eu'] });

    const rows = await ctx.clickhouse.query({
      query: `SELECT service, user_id, tags FROM spans FINAL WHERE workspace_id = {ws:String} AND trace_id = {id:String}`,
      query_params: { ws: tenant.workspaceId, id: traceId },
      format: 'JSONEachRow',
    });
    expect(await rows.json()).toEqual([
      { service: 'checkout-api', user_id: 'user-42', tags: ['beta', 'eu'] },
      { service: 'checkout-api', user_id: 'user-42', tags: ['beta', 'eu'] },
    ]);
  });

  it('answers null and no tags for a trace that sent none', async () => {
    const tenant = await ctx.tenant();
    const t = trace();
    await post(ctx, tenant, [t]);
    expect(await item(tenant, t.traceId)).toMatchObject({ service: null, userId: null, tags: [] });
  });

  it('lets a later payload set them and keeps them when a later one omits them', async () => {
    const tenant = await ctx.tenant();
    const traceId = uniqueId('later');
    await post(ctx, tenant, [{ traceId, source: 'sdk', spans: [span({ spanId: 'a', parentSpanId: 'root' })] }]);
    expect(await item(tenant, traceId)).toMatchObject({ userId: null, tags: [] });

    await post(ctx, tenant, [
      { traceId, source: 'sdk', userId: 'u-1', tags: ['first'], service: 'svc', spans: [span({ spanId: 'b', parentSpanId: 'root' })] },
    ]);
    expect(await item(tenant, traceId)).toMatchObject({ userId: 'u-1', tags: ['first'], service: 'svc' });

    // The spans that carried them are re-sent without them: the summary keeps the values.
    await post(ctx, tenant, [{ traceId, source: 'sdk', spans: [span({ spanId: 'b', parentSpanId: 'root' }), span({ spanId: 'root' })] }]);
    expect(await item(tenant, traceId)).toMatchObject({ userId: 'u-1', tags: ['first'], service: 'svc', status: 'completed' });

    await post(ctx, tenant, [
      { traceId, source: 'sdk', userId: 'u-2', tags: ['second', 'third'], spans: [span({ spanId: 'c', parentSpanId: 'root' })] },
    ]);
    expect(await item(tenant, traceId)).toMatchObject({ userId: 'u-2', tags: ['second', 'third'], service: 'svc', spanCount: 4 });
  });

  it('rejects out-of-bounds identity fields with their paths', async () => {
    const tenant = await ctx.tenant();
    const bad = [
      trace({ userId: 'x'.repeat(257) }),
      trace({ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }),
      trace({ tags: ['ok', 'y'.repeat(101)] }),
      trace({ service: 'line\nbreak' }),
      trace({ spans: [span({ ttftMs: -1 })] }),
      trace({ spans: [span({ promptVersion: '' })] }),
    ];
    const res = (await post(ctx, tenant, bad)).json().data;
    expect(res.accepted).toBe(0);
    expect(res.errors.map((e: { path: string }) => e.path)).toEqual([
      'traces.0.userId',
      'traces.1.tags',
      'traces.2.tags.1',
      'traces.3.service',
      'traces.4.spans.0.ttftMs',
      'traces.5.spans.0.promptVersion',
    ]);
  });
});
