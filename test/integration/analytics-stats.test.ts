import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { exactPercentile, expectBadQueries, fixtureTraces, sendTraces } from './analytics-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;

const send = (who: Tenant, traces: unknown[]) => sendTraces(ctx.app, who.headers, traces);

async function stats(query: string, who: Tenant = tenant) {
  const res = await ctx.app.inject({ method: 'GET', url: `/api/traces/stats?${query}`, headers: who.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.groups as Array<Record<string, any>>;
}

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  const { t1, t2, t3, t4, t5 } = fixtureTraces();
  // T1 arrives in two payloads (as the reference client flushes), and everything is re-sent.
  await send(tenant, [{ ...t1, spans: t1.spans.slice(0, 1) }]);
  await send(tenant, [{ ...t1, spans: t1.spans.slice(1) }, t2, t3, t4, t5]);
  await send(tenant, [t1, t2]);
  await send(tenant, [t3, t4]);
  const deleted = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${t5.traceId}`, headers: tenant.headers });
  expect(deleted.statusCode).toBe(200);
  // Another workspace with the same trace ids and far larger figures.
  const big = fixtureTraces();
  for (const trace of Object.values(big))
    for (const s of trace.spans as Array<Record<string, unknown>>) if ('costUsd' in s) s.costUsd = 1000;
  await send(other, Object.values(big));
});
afterAll(async () => {
  await ctx?.close();
});

describe('GET /api/traces/stats', () => {
  it('groups spans by model, ordered by cost, with exact figures', async () => {
    const groups = await stats('groupBy=model');
    expect(groups.map((g) => g.key)).toEqual(['gpt-4o', 'claude', 'gpt-4o-mini', null]);
    expect(groups[0]).toMatchObject({ traceCount: 2, spanCount: 2, errorCount: 0, inputTokens: 70, outputTokens: 45, totalTokens: 115 });
    expect(groups[0]!.costUsd).toBeCloseTo(0.6, 10);
    expect(groups[0]!.latencyMs).toEqual({ avg: 350, p50: 350, p95: 485, p99: 497 });
    expect(groups[1]).toMatchObject({ traceCount: 1, spanCount: 1, costUsd: 0.25, latencyMs: { avg: 400, p50: 400, p95: 400, p99: 400 } });
    // Spans without a model: T1's agent root (its repeated usage is not counted) and tool, T2's chain and tool.
    expect(groups[3]).toMatchObject({ traceCount: 2, spanCount: 4, errorCount: 2, inputTokens: 0, costUsd: 0 });
    expect(groups[3]!.latencyMs.p50).toBe(550);
  });

  it('groups spans by provider', async () => {
    const groups = await stats('groupBy=provider');
    expect(groups.map((g) => [g.key, g.traceCount, g.spanCount, g.totalTokens])).toEqual([
      ['openai', 3, 3, 125],
      ['anthropic', 1, 1, 50],
      [null, 2, 4, 0],
    ]);
    expect(groups[0]!.costUsd).toBeCloseTo(0.61, 10);
  });

  it('groups spans by kind, usage counted once per trace', async () => {
    const groups = await stats('groupBy=kind');
    expect(groups.map((g) => [g.key, g.traceCount, g.spanCount, g.errorCount, g.totalTokens])).toEqual([
      ['llm.chat', 2, 2, 0, 150],
      ['agent', 2, 2, 0, 15],
      ['llm.completion', 1, 1, 0, 10],
      ['tool', 2, 2, 1, 0],
      ['chain', 1, 1, 1, 0],
    ]);
    expect(groups[0]!.costUsd).toBeCloseTo(0.75, 10);
  });

  it('groups traces by source, latency over trace durations (running traces have none)', async () => {
    const groups = await stats('groupBy=source');
    expect(groups.map((g) => g.key)).toEqual(['sdk', 'otel']);
    expect(groups[0]).toMatchObject({ traceCount: 3, spanCount: 5, errorCount: 0, inputTokens: 75, outputTokens: 50, totalTokens: 125 });
    expect(groups[0]!.costUsd).toBeCloseTo(0.61, 10);
    expect(groups[0]!.latencyMs).toEqual({ avg: 750, p50: 750, p95: 975, p99: 995 });
    expect(groups[1]).toMatchObject({
      traceCount: 1,
      spanCount: 3,
      errorCount: 1,
      costUsd: 0.25,
      latencyMs: { avg: 3000, p50: 3000, p95: 3000, p99: 3000 },
    });
  });

  it('defaults to groupBy=model', async () => {
    expect((await stats('')).map((g) => g.key)).toEqual(['gpt-4o', 'claude', 'gpt-4o-mini', null]);
  });

  it('takes a half-open range [from, to) on the trace start, for span and trace groups', async () => {
    const range = 'from=2026-03-01T11:00:00Z&to=2026-03-02T09:00:00Z';
    expect((await stats(`groupBy=model&${range}`)).map((g) => [g.key, g.spanCount])).toEqual([
      ['claude', 1],
      [null, 2],
    ]);
    expect((await stats(`groupBy=source&${range}`)).map((g) => [g.key, g.traceCount])).toEqual([['otel', 1]]);
    // T1 starts exactly at `from`: included. T3 starts exactly at `to`: excluded.
    const edge = await stats('groupBy=source&from=2026-03-01T10:00:00Z&to=2026-03-02T09:00:00Z');
    expect(edge.map((g) => [g.key, g.traceCount])).toEqual([
      ['sdk', 1],
      ['otel', 1],
    ]);
    // Span-level groups place T1's late spans by the trace's start, not their own.
    const late = await stats('groupBy=kind&from=2026-03-01T10:00:00.050Z&to=2026-03-01T11:00:00Z');
    expect(late).toEqual([]);
  });

  it('filters by session', async () => {
    expect((await stats('groupBy=kind&sessionId=s1')).map((g) => [g.key, g.spanCount])).toEqual([
      ['llm.chat', 2],
      ['tool', 2],
      ['agent', 1],
      ['chain', 1],
    ]);
    expect((await stats('groupBy=source&sessionId=s1')).map((g) => [g.key, g.traceCount])).toEqual([
      ['sdk', 1],
      ['otel', 1],
    ]);
    expect(await stats('groupBy=model&sessionId=nobody')).toEqual([]);
  });

  it("never counts another workspace's traces", async () => {
    const groups = await stats('groupBy=source', other);
    expect(groups.map((g) => [g.key, g.traceCount])).toEqual([
      ['sdk', 4],
      ['otel', 1],
    ]);
    const empty = await ctx.tenant();
    expect(await stats('groupBy=kind', empty)).toEqual([]);
  });

  it('answers 400 naming the field for bad parameters', async () => {
    const cases: Array<[string, string]> = [
      ['groupBy=environment', 'querystring.groupBy'],
      ['from=yesterday', 'querystring.from'],
      ['to=2026-13-01T00:00:00Z', 'querystring.to'],
      ['from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'querystring.from'],
      ['sessionId=', 'querystring.sessionId'],
      // limit is a parameter since stats answer the top groups; out of range it is refused.
      ['limit=0', 'querystring.limit'],
      ['limit=1001', 'querystring.limit'],
      ['bogus=3', 'querystring'],
    ];
    await expectBadQueries(ctx.app, '/api/traces/stats', tenant.headers, cases);
  });

  it('needs a credential', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/traces/stats' });
    expect(res.statusCode).toBe(401);
  });

  it('follows re-sends, deletes and re-ingests of traces already aggregated', async () => {
    const who = await ctx.tenant();
    const { t1 } = fixtureTraces('live-');
    await send(who, [t1]);
    expect((await stats('groupBy=model', who)).map((g) => [g.key, g.costUsd])).toEqual([
      ['gpt-4o', 0.5],
      [null, 0],
    ]);
    // The LLM span re-sent with a corrected cost replaces the earlier one.
    const corrected = { ...t1, spans: [{ ...t1.spans[1]!, costUsd: 0.7 }] };
    await send(who, [corrected]);
    expect((await stats('groupBy=model', who)).map((g) => [g.key, g.costUsd, g.spanCount])).toEqual([
      ['gpt-4o', 0.7, 1],
      [null, 0, 2],
    ]);
    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${t1.traceId}`, headers: who.headers });
    expect(deleted.statusCode).toBe(200);
    expect(await stats('groupBy=kind', who)).toEqual([]);
    await send(who, [t1]);
    expect((await stats('groupBy=kind', who)).map((g) => [g.key, g.spanCount, g.costUsd])).toEqual([
      ['llm.chat', 1, 0.5],
      ['agent', 1, 0],
      ['tool', 1, 0],
    ]);
  });

  it('computes latency percentiles within 1% of exact on a larger set', async () => {
    const who = await ctx.tenant();
    const durations = Array.from({ length: 400 }, (_, i) => Math.round(((i * 7919) % 400) ** 1.7 + 20));
    const traces = durations.map((d, i) => ({
      traceId: `p${i}`,
      source: 'sdk',
      spans: [
        {
          spanId: 'r',
          name: 'root',
          kind: 'llm.chat',
          model: 'm',
          startTime: new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString(),
          endTime: new Date(Date.UTC(2026, 2, 1) + i * 1000 + d).toISOString(),
          durationMs: d,
          status: 'ok',
        },
      ],
    }));
    await send(who, traces);
    for (const groupBy of ['model', 'source']) {
      const [group] = await stats(`groupBy=${groupBy}`, who);
      for (const [name, level] of [
        ['p50', 0.5],
        ['p95', 0.95],
        ['p99', 0.99],
      ] as const) {
        const exact = exactPercentile(durations, level);
        expect(Math.abs(group!.latencyMs[name] - exact) / exact).toBeLessThanOrEqual(0.01);
      }
    }
  });
});
