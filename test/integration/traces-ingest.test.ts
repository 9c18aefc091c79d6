import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/app.js';
import { get, post, span, trace, uniqueId } from './traces-fixtures.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const fullSpan = {
  spanId: 'root-1',
  name: 'chat turn',
  kind: 'llm.chat',
  input: {
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?', name: 'ann' },
      { role: 'tool', content: '{"t":21}', toolCallId: 'call-1' },
    ],
    toolCalls: [{ id: 'call-1', name: 'weather', arguments: { city: 'Oslo' }, result: { t: 21 } }],
    documents: [{ content: 'doc', metadata: { url: 'https://x' }, score: 0.5 }],
    text: 'plain',
    raw: [1, 'two', { three: null }],
  },
  output: { text: 'sunny', messages: [{ role: 'assistant', content: 'sunny' }] },
  startTime: '2025-01-01T10:00:00.123456Z',
  endTime: '2025-01-01T12:00:02.500+02:00',
  durationMs: 2376.544,
  model: 'gpt-4o',
  provider: 'openai',
  inputTokens: 10,
  outputTokens: 5,
  totalTokens: 15,
  costUsd: 0.0012,
  status: 'error',
  statusMessage: 'boom',
  attributes: { 'gen_ai.request.temperature': 0.2, nested: { a: [1] } },
  events: [{ name: 'first-token', timestamp: '2025-01-01T10:00:00.5Z', attributes: { n: 1 } }],
  metadata: { userId: 'u1' },
};

describe('POST /api/traces', () => {
  it('round-trips every field of a span and the trace', async () => {
    const tenant = await ctx.tenant();
    const traceId = uniqueId('full');
    const body = {
      traceId,
      name: 'Weather',
      sessionId: 'sess 1',
      source: 'sdk',
      environment: 'staging',
      spans: [fullSpan, span({ parentSpanId: 'root-1', spanId: 'child' })],
    };
    const res = await post(ctx, tenant, [body]);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ accepted: 1, rejected: 0, errors: [] });

    const detail = (await get(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail).toMatchObject({
      traceId,
      name: 'Weather',
      sessionId: 'sess 1',
      source: 'sdk',
      environment: 'staging',
      status: 'error',
      traceKind: 'llm.chat',
      startTime: '2025-01-01T10:00:00.000Z',
      endTime: '2025-01-01T10:00:02.500Z',
      durationMs: 2376.544,
      model: 'gpt-4o',
      provider: 'openai',
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      costUsd: 0.0012,
      spanCount: 2,
      errorCount: 1,
    });
    const root = detail.spans.find((s: { spanId: string }) => s.spanId === 'root-1');
    // A sent cost is returned as provided (costSource is output only).
    expect(root).toEqual({
      ...fullSpan,
      costSource: 'provided',
      endTime: '2025-01-01T10:00:02.500Z',
      events: [{ name: 'first-token', timestamp: '2025-01-01T10:00:00.5Z', attributes: { n: 1 } }],
    });
    const child = detail.spans.find((s: { spanId: string }) => s.spanId === 'child');
    expect(Object.keys(child).sort()).toEqual(['durationMs', 'endTime', 'kind', 'name', 'parentSpanId', 'spanId', 'startTime', 'status']);
  });

  it('upserts re-sent traces and spans without duplicates, before and after merges', async () => {
    const tenant = await ctx.tenant();
    const traceId = uniqueId('up');
    const first = {
      traceId,
      name: 'v1',
      source: 'sdk',
      spans: [span({ spanId: 'a', name: 'one' }), span({ spanId: 'b', parentSpanId: 'a' })],
    };
    await post(ctx, tenant, [first]);
    await post(ctx, tenant, [{ ...first, name: 'v2', spans: [span({ spanId: 'a', name: 'two', status: 'error' })] }]);
    const check = async () => {
      const detail = (await get(ctx, tenant, `/api/traces/${traceId}`)).json().data;
      expect(detail.name).toBe('v2');
      expect(detail.spanCount).toBe(2);
      expect(detail.status).toBe('error');
      expect(detail.spans.map((s: { spanId: string; name: string }) => `${s.spanId}:${s.name}`)).toEqual(['a:two', 'b:step']);
      const list = (await get(ctx, tenant, '/api/traces')).json();
      expect(list.data.map((t: { traceId: string }) => t.traceId)).toEqual([traceId]);
      expect(list.meta.pagination.total).toBe(1);
    };
    await check();
    await ctx.clickhouse.command({ query: 'OPTIMIZE TABLE spans FINAL' });
    await ctx.clickhouse.command({ query: 'OPTIMIZE TABLE traces FINAL' });
    await check();
    const raw = await ctx.clickhouse.query({
      query: 'SELECT count() AS n FROM spans_latest WHERE workspace_id = {w:String}',
      query_params: { w: tenant.workspaceId },
      format: 'JSONEachRow',
    });
    expect(await raw.json()).toEqual([{ n: 2 }]);
  });

  it('keeps a trace running until its root arrives, then completes or fails it', async () => {
    const tenant = await ctx.tenant();
    const traceId = uniqueId('multi');
    const child = span({
      spanId: 'c1',
      parentSpanId: 'r',
      kind: 'llm.chat',
      model: 'm-small',
      inputTokens: 3,
      outputTokens: 1,
      startTime: '2025-01-01T09:59:59.000Z',
    });
    await post(ctx, tenant, [{ traceId, source: 'sdk', spans: [child] }]);
    let detail = (await get(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail).toMatchObject({ status: 'running', endTime: null, durationMs: null, traceKind: null, spanCount: 1, inputTokens: 3 });

    const root = span({ spanId: 'r', kind: 'agent', inputTokens: 100, endTime: '2025-01-01T10:00:05.000Z', durationMs: 5000 });
    await post(ctx, tenant, [{ traceId, source: 'sdk', name: 'late name', spans: [root] }]);
    detail = (await get(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail).toMatchObject({
      status: 'completed',
      traceKind: 'agent',
      name: 'late name',
      startTime: '2025-01-01T09:59:59.000Z',
      endTime: '2025-01-01T10:00:05.000Z',
      durationMs: 5000,
      spanCount: 2,
      model: 'm-small',
      inputTokens: 3,
      outputTokens: 1,
    });

    await post(ctx, tenant, [{ traceId, source: 'sdk', spans: [{ ...root, status: 'error', statusMessage: 'failed' }] }]);
    detail = (await get(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail).toMatchObject({ status: 'error', errorCount: 1, name: 'late name' });
  });

  it('ends with a summary of every span when payloads of one trace arrive concurrently', async () => {
    const tenant = await ctx.tenant();
    const traceId = uniqueId('concurrent');
    const payloads = Array.from({ length: 8 }, (_, i) =>
      post(ctx, tenant, [
        {
          traceId,
          source: 'sdk',
          spans: [span(i === 0 ? { spanId: 'root' } : { spanId: `c${i}`, parentSpanId: 'root', status: 'error' })],
        },
      ]),
    );
    for (const res of await Promise.all(payloads)) expect(res.json().data.accepted).toBe(1);
    const detail = (await get(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail).toMatchObject({ spanCount: 8, errorCount: 7, status: 'completed' });
  });

  it('sums usage over non-LLM spans only when the trace has no LLM span', async () => {
    const tenant = await ctx.tenant();
    const traceId = uniqueId('usage');
    await post(ctx, tenant, [
      {
        traceId,
        source: 'sdk',
        spans: [
          span({ spanId: 'r', kind: 'agent', inputTokens: 7, costUsd: 0.5 }),
          span({ parentSpanId: 'r', kind: 'tool', inputTokens: 2 }),
        ],
      },
    ]);
    const detail = (await get(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail).toMatchObject({ inputTokens: 9, costUsd: 0.5 });
    expect(detail.model).toBeUndefined();
    expect(detail.outputTokens).toBeUndefined();
  });

  it('stores the valid traces and reports each invalid one exactly', async () => {
    const tenant = await ctx.tenant();
    const good = trace();
    const res = await post(ctx, tenant, [
      good,
      {
        traceId: 'bad-1',
        source: 'sdk',
        spans: [span({ spanId: 'x', startTime: '2025-01-01T10:00:02Z', endTime: '2025-01-01T10:00:01Z' })],
      },
      { traceId: 'bad-2', source: 'sdk', spans: [span({ spanId: 'same' }), span({ spanId: 'same' })] },
      { traceId: 'bad-3', source: 'sdk', spans: [span({ spanId: 'self', parentSpanId: 'self', kind: 'nope' })] },
      'not a trace',
      // Ids no URL path can carry, so no client could read them back.
      { traceId: '..', source: 'sdk', spans: [span({ spanId: 'root' })] },
      { traceId: 'bad-6', source: 'sdk', spans: [span({ spanId: '.' })] },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      accepted: 1,
      rejected: 6,
      errors: [
        { index: 1, traceId: 'bad-1', path: 'traces.1.spans.0.endTime', message: 'must not be before startTime' },
        { index: 2, traceId: 'bad-2', path: 'traces.2.spans.1.spanId', message: 'duplicates the spanId of spans.0' },
        { index: 3, traceId: 'bad-3', path: 'traces.3.spans.0.kind', message: expect.stringContaining('llm.chat') },
        { index: 4, traceId: null, path: 'traces.4', message: expect.any(String) },
        { index: 5, traceId: '..', path: 'traces.5.traceId', message: 'must not be . or .. (a URL path cannot carry them)' },
        { index: 6, traceId: 'bad-6', path: 'traces.6.spans.0.spanId', message: 'must not be . or .. (a URL path cannot carry them)' },
      ],
    });
    const list = (await get(ctx, tenant, '/api/traces')).json();
    expect(list.data.map((t: { traceId: string }) => t.traceId)).toEqual([good.traceId]);
  });

  it('answers 400 for a body that is not {traces: [...]}', async () => {
    const tenant = await ctx.tenant();
    for (const payload of [{}, { traces: {} }, [trace()]]) {
      const res = await ctx.app.inject({ method: 'POST', url: '/api/traces', headers: tenant.headers, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('takes up to 100 traces on /batch and names the limit beyond', async () => {
    const tenant = await ctx.tenant();
    const ok = await post(
      ctx,
      tenant,
      Array.from({ length: 100 }, () => trace()),
      '/api/traces/batch',
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data).toMatchObject({ accepted: 100, rejected: 0 });
    const over = await post(
      ctx,
      tenant,
      Array.from({ length: 101 }, () => trace()),
      '/api/traces/batch',
    );
    expect(over.statusCode).toBe(400);
    expect(over.json().error.message).toContain('at most 100 traces');
    expect((await get(ctx, tenant, '/api/traces?limit=1')).json().meta.pagination.total).toBe(100);
  });
});
