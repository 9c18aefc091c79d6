import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { get, post, span, uniqueId } from './traces-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

/** What the tree leaves out of a span: its payloads, free-form JSON, status text and prices. */
const heavy = ['input', 'output', 'attributes', 'events', 'droppedEvents', 'metadata', 'statusMessage', 'pricing'];
const slim = (whole: Record<string, unknown>) => Object.fromEntries(Object.entries(whole).filter(([key]) => !heavy.includes(key)));

/**
 * A trace with every kind of span: a root with payloads of every sort, a priced generation
 * (cost computed from the built-in table) with usage details, a child with a sent cost and a
 * failed tool whose times carry microseconds and an offset; one span names a parent that is
 * not in the trace.
 */
function richTrace(traceId = uniqueId('tree')) {
  return {
    traceId,
    name: 'support chat',
    source: 'sdk',
    sessionId: 'sess-tree',
    tags: ['a'],
    spans: [
      span({
        spanId: 'root',
        name: 'agent run',
        kind: 'agent',
        startTime: '2025-04-01T09:00:00.000Z',
        endTime: '2025-04-01T09:00:05.000Z',
        durationMs: 5000,
        input: { messages: [{ role: 'user', content: 'secret question' }], raw: { deep: [1, 2] } },
        output: { text: 'secret answer' },
        attributes: { 'app.version': '1.2' },
        metadata: { latencyMs: 4900 },
        events: [{ name: 'retry', timestamp: '2025-04-01T09:00:01.000Z' }],
        droppedEvents: 2,
      }),
      span({
        spanId: 'llm',
        parentSpanId: 'root',
        name: 'chat gpt-4o',
        kind: 'llm.chat',
        startTime: '2025-04-01T09:00:01.000Z',
        endTime: '2025-04-01T09:00:03.500Z',
        durationMs: 2500,
        model: 'gpt-4o',
        provider: 'openai',
        inputTokens: 5000,
        outputTokens: 200,
        totalTokens: 5200,
        cacheReadTokens: 4000,
        reasoningTokens: 12,
        ttftMs: 310.5,
        promptName: 'support',
        promptVersion: '1.0.0',
        input: { messages: [{ role: 'system', content: 'secret system' }] },
      }),
      span({
        spanId: 'paid',
        parentSpanId: 'root',
        name: 'rerank',
        kind: 'rerank',
        startTime: '2025-04-01T09:00:03.600Z',
        endTime: '2025-04-01T09:00:03.700Z',
        durationMs: 100,
        costUsd: 0.25,
        cacheWriteTokens: 7,
      }),
      span({
        spanId: 'tool',
        parentSpanId: 'llm',
        name: 'lookup',
        kind: 'tool',
        startTime: '2025-04-01T11:00:02.000123+02:00',
        endTime: '2025-04-01T11:00:02.500456+02:00',
        durationMs: 500.333,
        status: 'error',
        statusMessage: 'secret failure',
      }),
      span({
        spanId: 'orphan',
        parentSpanId: 'not-sent',
        name: 'late',
        startTime: '2025-04-01T09:00:04.000Z',
        endTime: '2025-04-01T09:00:04.000Z',
        durationMs: 0,
      }),
    ],
  };
}

describe('GET /api/traces/:id/tree', () => {
  it('is the trace of GET /api/traces/:id with every span slimmed, in the same order', async () => {
    const sent = richTrace();
    expect((await post(ctx, tenant, [sent])).json().data.accepted).toBe(1);
    const full = (await get(ctx, tenant, `/api/traces/${sent.traceId}`)).json().data;
    const res = await get(ctx, tenant, `/api/traces/${sent.traceId}/tree`);
    expect(res.statusCode).toBe(200);
    const tree = res.json().data;

    expect(tree).toEqual({ ...full, spans: full.spans.map(slim) });
    expect(JSON.stringify(tree)).not.toContain('secret');
    // Known answers, not only "equal to the full read": order, times, usage, cost and its source.
    expect(tree.spans.map((s: { spanId: string }) => s.spanId)).toEqual(['root', 'llm', 'tool', 'paid', 'orphan']);
    expect(tree.spans[0]).toEqual({
      spanId: 'root',
      name: 'agent run',
      kind: 'agent',
      startTime: '2025-04-01T09:00:00.000Z',
      endTime: '2025-04-01T09:00:05.000Z',
      durationMs: 5000,
      status: 'ok',
    });
    expect(tree.spans[1]).toMatchObject({
      parentSpanId: 'root',
      model: 'gpt-4o',
      provider: 'openai',
      inputTokens: 5000,
      outputTokens: 200,
      totalTokens: 5200,
      cacheReadTokens: 4000,
      reasoningTokens: 12,
      ttftMs: 310.5,
      costSource: 'computed',
      promptName: 'support',
      promptVersion: '1.0.0',
    });
    expect(tree.spans[1].costUsd).toBeGreaterThan(0);
    expect(full.spans[1].pricing).toMatchObject({ source: 'builtin' });
    expect(tree.spans[2]).toEqual({
      spanId: 'tool',
      parentSpanId: 'llm',
      name: 'lookup',
      kind: 'tool',
      startTime: '2025-04-01T09:00:02.000123Z',
      endTime: '2025-04-01T09:00:02.500456Z',
      durationMs: 500.333,
      status: 'error',
    });
    expect(tree.spans[3]).toMatchObject({ costUsd: 0.25, costSource: 'provided', cacheWriteTokens: 7 });
    expect(tree.spans[4]).toMatchObject({ parentSpanId: 'not-sent', durationMs: 0 });
    expect(tree).toMatchObject({ traceId: sent.traceId, name: 'support chat', sessionId: 'sess-tree', spanCount: 5, errorCount: 1 });
  });

  it('shows a re-sent span once, as last sent', async () => {
    const sent = richTrace();
    await post(ctx, tenant, [sent]);
    const again = { ...sent, spans: sent.spans.map((s) => (s.spanId === 'tool' ? { ...s, name: 'lookup v2', status: 'ok' } : s)) };
    delete (again.spans[3] as { statusMessage?: string }).statusMessage;
    await post(ctx, tenant, [again]);
    await post(ctx, tenant, [again]);
    const tree = (await get(ctx, tenant, `/api/traces/${sent.traceId}/tree`)).json().data;
    expect(tree.spans).toHaveLength(5);
    expect(tree.spans.filter((s: { spanId: string }) => s.spanId === 'tool')).toEqual([
      expect.objectContaining({ name: 'lookup v2', status: 'ok' }),
    ]);
    expect(tree.errorCount).toBe(0);
    const span = (await get(ctx, tenant, `/api/traces/${sent.traceId}/spans/tool`)).json().data;
    expect(span).toMatchObject({ name: 'lookup v2', status: 'ok' });
    expect(span.statusMessage).toBeUndefined();
  });
});

describe('GET /api/traces/:id/spans/:spanId', () => {
  it('is the span exactly as in GET /api/traces/:id, for every span', async () => {
    const sent = richTrace();
    await post(ctx, tenant, [sent]);
    const full = (await get(ctx, tenant, `/api/traces/${sent.traceId}`)).json().data;
    for (const whole of full.spans) {
      const res = await get(ctx, tenant, `/api/traces/${sent.traceId}/spans/${whole.spanId}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual(whole);
    }
    const root = (await get(ctx, tenant, `/api/traces/${sent.traceId}/spans/root`)).json().data;
    expect(root).toMatchObject({
      input: { messages: [{ role: 'user', content: 'secret question' }], raw: { deep: [1, 2] } },
      output: { text: 'secret answer' },
      droppedEvents: 2,
      metadata: { latencyMs: 4900 },
    });
  });

  it('takes ids of 128 characters and refuses longer ones with a validation error', async () => {
    const traceId = 't'.repeat(128);
    const spanId = 's'.repeat(128);
    await post(ctx, tenant, [{ traceId, source: 'sdk', spans: [span({ spanId, input: { text: 'long ids' } })] }]);
    const tree = await get(ctx, tenant, `/api/traces/${traceId}/tree`);
    expect(tree.json().data.spans.map((s: { spanId: string }) => s.spanId)).toEqual([spanId]);
    expect((await get(ctx, tenant, `/api/traces/${traceId}/spans/${spanId}`)).json().data.input).toEqual({ text: 'long ids' });
    for (const url of [`/api/traces/${traceId}/spans/${spanId}s`, `/api/traces/${traceId}t/tree`, `/api/traces/${traceId}/spans/a%20b`]) {
      const res = await get(ctx, tenant, url);
      expect({ url, status: res.statusCode, code: res.json().error.code }).toEqual({ url, status: 400, code: 'VALIDATION_ERROR' });
    }
  });
});

describe('not found, deleted and other workspaces', () => {
  let traceId: string;
  beforeAll(async () => {
    traceId = richTrace().traceId;
    await post(ctx, tenant, [richTrace(traceId)]);
  });

  it('answers 404 in the envelope for an unknown trace or span', async () => {
    const cases = [
      [`/api/traces/${traceId}-nope/tree`, 'Trace not found', { traceId: `${traceId}-nope` }],
      [`/api/traces/${traceId}-nope/spans/root`, 'Span not found', { traceId: `${traceId}-nope`, spanId: 'root' }],
      [`/api/traces/${traceId}/spans/nope`, 'Span not found', { traceId, spanId: 'nope' }],
    ] as const;
    for (const [url, message, details] of cases) {
      const res = await get(ctx, tenant, url);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: { code: 'NOT_FOUND', message, details }, meta: { requestId: expect.any(String) } });
    }
  });

  it('answers 404 to another workspace for the tree and every span', async () => {
    const other = await ctx.tenant();
    expect((await get(ctx, other, `/api/traces/${traceId}/tree`)).statusCode).toBe(404);
    for (const spanId of ['root', 'llm', 'tool', 'paid', 'orphan']) {
      const res = await get(ctx, other, `/api/traces/${traceId}/spans/${spanId}`);
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain('secret');
    }
    expect((await get(ctx, tenant, `/api/traces/${traceId}/spans/root`)).statusCode).toBe(200);
  });

  it('answers 404 once the trace is deleted', async () => {
    const deleted = richTrace();
    await post(ctx, tenant, [deleted]);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${deleted.traceId}`, headers: tenant.headers })).statusCode).toBe(
      200,
    );
    expect((await get(ctx, tenant, `/api/traces/${deleted.traceId}/tree`)).statusCode).toBe(404);
    expect((await get(ctx, tenant, `/api/traces/${deleted.traceId}/spans/llm`)).statusCode).toBe(404);
  });

  it('refuses a request without a key', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: `/api/traces/${traceId}/tree` });
    expect(res.statusCode).toBe(401);
  });
});
