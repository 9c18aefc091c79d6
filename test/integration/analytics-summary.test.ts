import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { getAnalytics } from '../../src/traces/query/analytics.js';
import { expectBadQueries, fixtureTraces, sendTraces } from './analytics-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;

const send = (who: Tenant, traces: unknown[]) => sendTraces(ctx.app, who.headers, traces);

async function analytics(query: string, who: Tenant = tenant) {
  const res = await ctx.app.inject({ method: 'GET', url: `/api/traces/analytics?${query}`, headers: who.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

const threeDays = 'startAfter=2026-03-01T00:00:00Z&startBefore=2026-03-04T00:00:00Z';
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  const { t1, t2, t3, t4, t5 } = fixtureTraces();
  await send(tenant, [t1, t2, t3, t4, t5]);
  await send(tenant, [t2, t1]);
  await send(tenant, [{ ...t1, spans: t1.spans.slice(2) }]);
  const deleted = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${t5.traceId}`, headers: tenant.headers });
  expect(deleted.statusCode).toBe(200);
  await send(other, Object.values(fixtureTraces()));
});
afterAll(async () => {
  await ctx?.close();
});

describe('GET /api/traces/analytics', () => {
  it('answers totals, error rate and latency over trace durations', async () => {
    const data = await analytics(threeDays);
    expect(data.range).toEqual({ startAfter: '2026-03-01T00:00:00Z', startBefore: '2026-03-04T00:00:00Z' });
    expect(data.totals).toMatchObject({
      traceCount: 4,
      spanCount: 8,
      errorCount: 1,
      errorRate: 0.25,
      inputTokens: 105,
      outputTokens: 70,
      totalTokens: 175,
    });
    expect(data.totals.costUsd).toBeCloseTo(0.86, 10);
    // Durations of the three finished traces: 500, 1000, 3000 (T4 is running).
    const expected = { avg: 1500, p50: 1000, p90: 2600, p95: 2800, p99: 2960 };
    for (const [name, value] of Object.entries(expected)) expect(data.latencyMs[name], name).toBeCloseTo(value, 6);
  });

  it('breaks cost down by model, provider and kind with shares summing to 1', async () => {
    const { costBreakdown, totals } = await analytics(threeDays);
    expect(costBreakdown.byModel.map((g: any) => g.key)).toEqual(['gpt-4o', 'claude', 'gpt-4o-mini', null]);
    expect(costBreakdown.byProvider.map((g: any) => g.key)).toEqual(['openai', 'anthropic', null]);
    expect(costBreakdown.byKind.map((g: any) => g.key)).toEqual(['llm.chat', 'agent', 'llm.completion', 'chain', 'tool']);
    expect(costBreakdown.byModel[0].costUsd).toBeCloseTo(0.6, 10);
    expect(costBreakdown.byModel[0].share).toBeCloseTo(0.6 / 0.86, 10);
    for (const part of [costBreakdown.byModel, costBreakdown.byProvider, costBreakdown.byKind]) {
      expect(sum(part.map((g: any) => g.share))).toBeCloseTo(1, 10);
      expect(sum(part.map((g: any) => g.costUsd))).toBeCloseTo(totals.costUsd, 10);
    }
  });

  it('fills daily buckets beyond 2 days and they sum to the totals', async () => {
    const { tokenUsageOverTime: usage, totals } = await analytics(threeDays);
    expect(usage.interval).toBe('day');
    expect(usage.points.map((p: any) => [p.bucket, p.traceCount, p.totalTokens])).toEqual([
      ['2026-03-01T00:00:00.000Z', 2, 150],
      ['2026-03-02T00:00:00.000Z', 1, 15],
      ['2026-03-03T00:00:00.000Z', 1, 10],
    ]);
    for (const field of ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd', 'traceCount']) {
      expect(sum(usage.points.map((p: any) => p[field]))).toBeCloseTo(field === 'traceCount' ? totals.traceCount : totals[field], 10);
    }
  });

  it('uses hourly buckets up to 2 days, empty ones filled with zeros', async () => {
    const { tokenUsageOverTime: usage } = await analytics('startAfter=2026-03-01T09:00:00Z&startBefore=2026-03-01T13:00:00Z');
    expect(usage.interval).toBe('hour');
    expect(usage.points).toEqual([
      { bucket: '2026-03-01T09:00:00.000Z', inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0, traceCount: 0 },
      { bucket: '2026-03-01T10:00:00.000Z', inputTokens: 60, outputTokens: 40, totalTokens: 100, costUsd: 0.5, traceCount: 1 },
      { bucket: '2026-03-01T11:00:00.000Z', inputTokens: 30, outputTokens: 20, totalTokens: 50, costUsd: 0.25, traceCount: 1 },
      { bucket: '2026-03-01T12:00:00.000Z', inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0, traceCount: 0 },
    ]);
    const twoDays = await analytics('startAfter=2026-03-01T00:00:00Z&startBefore=2026-03-03T00:00:00Z');
    expect(twoDays.tokenUsageOverTime.interval).toBe('hour');
    expect(twoDays.tokenUsageOverTime.points).toHaveLength(48);
  });

  it('answers cost efficiency', async () => {
    const { costEfficiency } = await analytics(threeDays);
    expect(costEfficiency.costPerTrace).toBeCloseTo(0.86 / 4, 10);
    expect(costEfficiency.costPer1kTokens).toBeCloseTo((0.86 * 1000) / 175, 10);
    expect(costEfficiency.tokensPerTrace).toBe(43.75);
    // Two completed traces (T1, T3) carry the whole spend.
    expect(costEfficiency.costPerSuccessfulTrace).toBeCloseTo(0.43, 10);
  });

  it('answers the budget block only when a budget is given', async () => {
    expect((await analytics(threeDays)).budget).toBeUndefined();
    const under = (await analytics(`${threeDays}&budget=1`)).budget;
    expect(under).toMatchObject({ budgetUsd: 1, exceeded: false });
    expect(under.spentUsd).toBeCloseTo(0.86, 10);
    expect(under.remainingUsd).toBeCloseTo(0.14, 10);
    expect(under.utilization).toBeCloseTo(0.86, 10);
    // The range lies in the past: nothing more to extrapolate.
    expect(under.projectedUsd).toBeCloseTo(0.86, 10);
    const over = (await analytics(`${threeDays}&budget=0.5`)).budget;
    expect(over).toMatchObject({ budgetUsd: 0.5, exceeded: true });
    expect(over.remainingUsd).toBeCloseTo(-0.36, 10);
    const zero = (await analytics(`${threeDays}&budget=0`)).budget;
    expect(zero).toMatchObject({ budgetUsd: 0, utilization: null, exceeded: true });
  });

  it('projects the spend to the end of the range at the observed rate', async () => {
    const query = { startAfter: '2026-03-01T00:00:00Z', startBefore: '2026-03-05T00:00:00Z', budget: 1 };
    // Two of four days elapsed: the spend so far, doubled.
    const data = await getAnalytics(ctx.clickhouse, tenant.workspaceId, query, Date.parse('2026-03-03T00:00:00Z'));
    expect(data.budget!.projectedUsd).toBeCloseTo(1.72, 10);
    expect(data.budget!.utilization).toBeCloseTo(0.86, 10);
  });

  it('defaults to the last 30 days', async () => {
    const now = Date.parse('2026-03-20T00:00:00Z');
    const data = await getAnalytics(ctx.clickhouse, tenant.workspaceId, {}, now);
    expect(data.range).toEqual({ startAfter: '2026-02-18T00:00:00.000Z', startBefore: '2026-03-20T00:00:00.000Z' });
    expect(data.totals.traceCount).toBe(4);
    expect(data.tokenUsageOverTime.points).toHaveLength(30);
    const later = await getAnalytics(ctx.clickhouse, tenant.workspaceId, {}, Date.parse('2026-05-01T00:00:00Z'));
    expect(later.totals.traceCount).toBe(0);
  });

  it('answers zeros and nulls for an empty workspace', async () => {
    const empty = await ctx.tenant();
    const data = await analytics(`${threeDays}&budget=10`, empty);
    expect(data.totals).toEqual({
      traceCount: 0,
      spanCount: 0,
      errorCount: 0,
      errorRate: 0,
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      costUsd: 0,
      unpricedSpanCount: 0,
    });
    expect(data.latencyMs).toEqual({ avg: null, p50: null, p90: null, p95: null, p99: null });
    expect(data.costBreakdown).toEqual({
      byModel: [],
      byProvider: [],
      byKind: [],
      bySource: [
        { key: 'provided', costUsd: 0, share: 0 },
        { key: 'computed', costUsd: 0, share: 0 },
      ],
    });
    expect(data.costEfficiency).toEqual({ costPerTrace: null, costPer1kTokens: null, tokensPerTrace: null, costPerSuccessfulTrace: null });
    expect(data.budget).toMatchObject({ spentUsd: 0, remainingUsd: 10, utilization: 0, exceeded: false, projectedUsd: 0 });
    expect(data.tokenUsageOverTime.points.every((p: any) => p.traceCount === 0)).toBe(true);
  });

  it("never counts another workspace's traces or a deleted one", async () => {
    const mine = await analytics(threeDays);
    const theirs = await analytics(threeDays, other);
    expect(mine.totals.traceCount).toBe(4);
    expect(theirs.totals.traceCount).toBe(5);
    expect(theirs.totals.costUsd).toBeCloseTo(100.86, 10);
  });

  it('answers 400 naming the field for bad parameters', async () => {
    const cases: Array<[string, string]> = [
      ['budget=-1', 'querystring.budget'],
      ['budget=lots', 'querystring.budget'],
      ['budget=', 'querystring.budget'],
      ['startAfter=2026-03-01', 'querystring.startAfter'],
      ['startBefore=soon', 'querystring.startBefore'],
      ['startAfter=2026-03-05T00:00:00Z&startBefore=2026-03-01T00:00:00Z', 'querystring.startAfter'],
      ['from=2026-03-01T00:00:00Z', 'querystring'],
    ];
    await expectBadQueries(ctx.app, '/api/traces/analytics', tenant.headers, cases);
  });
});
