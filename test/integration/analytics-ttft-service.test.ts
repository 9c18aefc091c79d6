import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type Tenant } from '../support/app.js';
import { sendTraces } from './analytics-fixtures.js';

/**
 * Time to first token in stats groups and analytics, the trace field `service` as a list
 * filter and a stats group, and the native span fields the OTLP bridge fills (droppedEvents,
 * messages with their tool calls), accepted on POST /api/traces too.
 */

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  const span = (spanId: string, model: string, ttftMs: number | undefined, start: string, extra: Record<string, unknown> = {}) => ({
    spanId,
    parentSpanId: 'root',
    name: `chat ${model}`,
    kind: 'llm.chat',
    model,
    provider: 'openai',
    startTime: start,
    endTime: start.replace(':00.000Z', ':01.000Z'),
    durationMs: 1000,
    status: 'ok',
    inputTokens: 10,
    outputTokens: 5,
    ...(ttftMs === undefined ? {} : { ttftMs }),
    ...extra,
  });
  const root = (start: string) => ({
    spanId: 'root',
    name: 'agent',
    kind: 'agent',
    startTime: start,
    endTime: start.replace(':00.000Z', ':02.000Z'),
    durationMs: 2000,
    status: 'ok',
  });
  await sendTraces(ctx.app, tenant.headers, [
    {
      traceId: 'tt-1',
      source: 'sdk',
      service: 'checkout',
      spans: [
        root('2026-05-01T10:00:00.000Z'),
        span('a', 'gpt-4o', 100, '2026-05-01T10:00:00.000Z'),
        span('b', 'gpt-4o', 200, '2026-05-01T10:00:00.000Z'),
      ],
    },
    {
      traceId: 'tt-2',
      source: 'sdk',
      service: 'checkout',
      spans: [
        root('2026-05-01T11:00:00.000Z'),
        span('a', 'gpt-4o', 300, '2026-05-01T11:00:00.000Z'),
        span('b', 'gpt-4o-mini', undefined, '2026-05-01T11:00:00.000Z'),
      ],
    },
    {
      traceId: 'tt-3',
      source: 'sdk',
      service: 'search',
      spans: [root('2026-05-01T12:00:00.000Z'), span('a', 'gpt-4o-mini', 50, '2026-05-01T12:00:00.000Z')],
    },
    {
      traceId: 'tt-4',
      source: 'sdk',
      spans: [
        root('2026-05-01T13:00:00.000Z'),
        span('a', 'claude', undefined, '2026-05-01T13:00:00.000Z', {
          droppedEvents: 3,
          output: { messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: { x: 1 } }] }] },
        }),
      ],
    },
  ]);
});
afterAll(async () => {
  await ctx?.close();
});

const get = async (url: string) => {
  const res = await ctx.app.inject({ method: 'GET', url, headers: tenant.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
};

describe('time to first token', () => {
  it('stats by model: p50 and p95 of the spans that have one, exact; null for a group without', async () => {
    const groups = (await get('/api/traces/stats?groupBy=model')).groups as { key: string | null; ttftMs: unknown }[];
    const byKey = Object.fromEntries(groups.map((g) => [g.key, g.ttftMs]));
    expect(byKey['gpt-4o']).toEqual({ p50: 200, p95: 290 });
    expect(byKey['gpt-4o-mini']).toEqual({ p50: 50, p95: 50 });
    expect(byKey.claude).toEqual({ p50: null, p95: null });
  });
  it('stats by kind and provider', async () => {
    const kind = (await get('/api/traces/stats?groupBy=kind')).groups.find((g: { key: string }) => g.key === 'llm.chat');
    expect(kind.ttftMs).toEqual({ p50: 150, p95: 285 });
    const agent = (await get('/api/traces/stats?groupBy=kind')).groups.find((g: { key: string }) => g.key === 'agent');
    expect(agent.ttftMs).toEqual({ p50: null, p95: null });
    const provider = (await get('/api/traces/stats?groupBy=provider')).groups.find((g: { key: string }) => g.key === 'openai');
    expect(provider.ttftMs).toEqual({ p50: 150, p95: 285 });
  });
  it('analytics over the range', async () => {
    const data = await get('/api/traces/analytics?startAfter=2026-05-01T00:00:00Z&startBefore=2026-05-02T00:00:00Z');
    expect(data.ttftMs).toEqual({ p50: 150, p95: 285 });
  });
});

describe('service', () => {
  it('groups traces by service', async () => {
    const groups = (await get('/api/traces/stats?groupBy=service')).groups as { key: string | null; traceCount: number; ttftMs: unknown }[];
    const byKey = Object.fromEntries(groups.map((g) => [g.key, g]));
    expect(byKey.checkout).toMatchObject({ traceCount: 2, ttftMs: { p50: 200, p95: 290 } });
    expect(byKey.search).toMatchObject({ traceCount: 1 });
    expect(byKey.null).toMatchObject({ traceCount: 1 });
  });
  it('filters the list', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/traces?service=checkout', headers: tenant.headers });
    expect(
      res
        .json()
        .data.map((t: { traceId: string }) => t.traceId)
        .sort(),
    ).toEqual(['tt-1', 'tt-2']);
    const none = await ctx.app.inject({ method: 'GET', url: '/api/traces?service=nowhere', headers: tenant.headers });
    expect(none.json().data).toEqual([]);
  });
});

describe('native span fields', () => {
  it('droppedEvents and tool calls on an assistant message round-trip', async () => {
    const trace = await get('/api/traces/tt-4');
    const span = trace.spans.find((s: { spanId: string }) => s.spanId === 'a');
    expect(span.droppedEvents).toBe(3);
    expect(span.output.messages[0].toolCalls).toEqual([{ id: 'c', name: 'f', arguments: { x: 1 } }]);
  });
});
