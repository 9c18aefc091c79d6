import { calcPrice } from '@pydantic/genai-prices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repriceRange } from '../../src/traces/query/reprice.js';
import { WorkspacePriceIndex } from '../../src/traces/cost/workspace-prices.js';
import { createTestContext, type TestContext, type Tenant } from '../support/app.js';
import { get, post, span, trace, uniqueId } from './traces-fixtures.js';

/**
 * Nothing counted twice, and every view of cost agreeing: the trace list, the detail, stats
 * by model and analytics, on traces whose spans repeat their children's usage (an agent span,
 * an embeddings span around another, the Vercel AI SDK's wrapper around doGenerate), before
 * and after a reprice.
 */

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const at = (second: number) => `2026-03-02T10:00:${String(second).padStart(2, '0')}.000Z`;
const range = { startAfter: '2026-03-02T00:00:00Z', startBefore: '2026-03-03T00:00:00Z' };
const query = `startAfter=${range.startAfter}&startBefore=${range.startBefore}`;
const builtin = (model: string, input: number, output: number) =>
  calcPrice({ input_tokens: input, output_tokens: output }, model, { providerId: 'openai', timestamp: new Date(at(0)) })!.total_price;

const node = (spanId: string, parentSpanId: string | undefined, kind: string, fields: Record<string, unknown> = {}) =>
  span({ spanId, ...(parentSpanId && { parentSpanId }), kind, name: spanId, startTime: at(0), endTime: at(1), ...fields });
const chat = (input: number, output: number) => ({
  model: 'gpt-4o-mini',
  provider: 'openai',
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
});

function traces() {
  const agent = trace({
    traceId: uniqueId('agent'),
    spans: [
      // An invoke_agent span repeating its children's usage.
      node('agent', undefined, 'agent', chat(300, 60)),
      node('step-1', 'agent', 'llm.chat', chat(100, 20)),
      node('step-2', 'agent', 'llm.chat', chat(200, 40)),
    ],
  });
  const embedding = { model: 'text-embedding-3-small', provider: 'openai', inputTokens: 7, totalTokens: 7 };
  const embeddings = trace({
    traceId: uniqueId('embed'),
    spans: [node('outer', undefined, 'llm.embedding', embedding), node('inner', 'outer', 'llm.embedding', embedding)],
  });
  const vercel = trace({
    traceId: uniqueId('vercel'),
    spans: [
      node('ai.generateText', undefined, 'llm.chat', chat(300, 60)),
      node('ai.generateText.doGenerate-1', 'ai.generateText', 'llm.chat', chat(100, 20)),
      node('ai.toolCall', 'ai.generateText', 'tool'),
      node('ai.generateText.doGenerate-2', 'ai.generateText', 'llm.chat', chat(200, 40)),
    ],
  });
  const paid = trace({ traceId: uniqueId('paid'), spans: [node('paid', undefined, 'llm.chat', { ...chat(1000, 100), costUsd: 0.25 })] });
  const unknown = trace({
    traceId: uniqueId('unknown'),
    spans: [node('unknown', undefined, 'llm.chat', { model: 'acme-x', provider: 'acme', inputTokens: 1000, outputTokens: 100 })],
  });
  return { agent, embeddings, vercel, paid, unknown };
}

/** Every view of cost for the workspace, to compare. */
async function views(tenant: Tenant, ids: Record<string, string>) {
  const list = (await get(ctx, tenant, `/api/traces?${query}&limit=100`)).json().data as Array<{ traceId: string; costUsd?: number }>;
  const listed = Object.fromEntries(Object.entries(ids).map(([name, id]) => [name, list.find((t) => t.traceId === id)?.costUsd ?? 0]));
  const details: Record<string, number> = {};
  for (const [name, id] of Object.entries(ids)) details[name] = (await get(ctx, tenant, `/api/traces/${id}`)).json().data.costUsd ?? 0;
  const stats = (await get(ctx, tenant, `/api/traces/stats?groupBy=model&from=${range.startAfter}&to=${range.startBefore}`)).json().data
    .groups as Array<{ key: string | null; costUsd: number }>;
  const analytics = (await get(ctx, tenant, `/api/traces/analytics?${query}`)).json().data;
  return { listed, details, stats: Object.fromEntries(stats.map((g) => [g.key, g.costUsd])), analytics };
}

const cents = (x: number) => Math.round(x * 100);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('cost aggregates', () => {
  it('counts repeated usage once, agrees everywhere, and reprices only computed spans', async () => {
    const tenant = await ctx.tenant();
    const all = traces();
    expect((await post(ctx, tenant, Object.values(all))).json().data).toMatchObject({ accepted: 5, rejected: 0 });
    const ids = Object.fromEntries(Object.entries(all).map(([name, t]) => [name, t.traceId]));

    const steps = builtin('gpt-4o-mini', 100, 20) + builtin('gpt-4o-mini', 200, 40);
    const embed = builtin('text-embedding-3-small', 7, 0);
    const expected = { agent: steps, embeddings: embed, vercel: steps, paid: 0.25, unknown: 0 };
    const before = await views(tenant, ids);
    for (const name of Object.keys(expected) as Array<keyof typeof expected>) {
      expect(before.listed[name], name).toBeCloseTo(expected[name], 12);
      expect(before.details[name], name).toBeCloseTo(expected[name], 12);
    }
    const total = sum(Object.values(expected));
    expect(before.analytics.totals.costUsd).toBeCloseTo(total, 12);
    expect(before.analytics.totals.unpricedSpanCount).toBe(1);
    expect(before.stats['gpt-4o-mini']).toBeCloseTo(2 * steps + 0.25, 12);
    expect(before.stats['text-embedding-3-small']).toBeCloseTo(embed, 12);
    expect(cents(sum(Object.values(before.stats)))).toBe(cents(total));
    const byModel = Object.fromEntries(
      before.analytics.costBreakdown.byModel.map((e: { key: string; costUsd: number }) => [e.key, e.costUsd]),
    );
    expect(byModel['gpt-4o-mini']).toBeCloseTo(before.stats['gpt-4o-mini'] as number, 12);
    expect(before.analytics.costBreakdown.bySource).toEqual([
      { key: 'provided', costUsd: 0.25, share: expect.closeTo(0.25 / total, 12) },
      { key: 'computed', costUsd: expect.closeTo(2 * steps + embed, 12), share: expect.closeTo((2 * steps + embed) / total, 12) },
    ]);
    // The token sums follow the same rule: the agent and wrapper spans are not added.
    const agentItem = (await get(ctx, tenant, `/api/traces/${ids.agent}`)).json().data;
    expect(agentItem).toMatchObject({ inputTokens: 300, outputTokens: 60 });
    expect((await get(ctx, tenant, `/api/traces/${ids.vercel}`)).json().data).toMatchObject({ inputTokens: 300, outputTokens: 60 });
    expect((await get(ctx, tenant, `/api/traces/${ids.embeddings}`)).json().data).toMatchObject({ inputTokens: 7 });

    // New prices: gpt-4o-mini at 1 and 1 USD per million, acme-x at 2 and 2.
    const price = (body: object) =>
      ctx.app.inject({ method: 'POST', url: '/api/models', headers: tenant.headers, payload: { matchType: 'exact', ...body } });
    expect((await price({ model: 'gpt-4o-mini', inputPerMillion: 1, outputPerMillion: 1 })).statusCode).toBe(201);
    expect((await price({ model: 'acme-x', inputPerMillion: 2, outputPerMillion: 2 })).statusCode).toBe(201);
    const reprice = (tenantToUse: Tenant, body: object) =>
      ctx.app.inject({ method: 'POST', url: '/api/models/reprice', headers: tenantToUse.headers, payload: body });

    // Another workspace's reprice, and a range holding nothing, change nothing.
    expect((await reprice(await ctx.tenant(), range)).json().data).toMatchObject({ spansExamined: 0, spansUpdated: 0 });
    expect(
      (await reprice(tenant, { startAfter: '2026-04-01T00:00:00Z', startBefore: '2026-04-02T00:00:00Z' })).json().data.spansExamined,
    ).toBe(0);
    expect((await reprice(tenant, { startAfter: range.startAfter })).statusCode).toBe(400);

    const res = await reprice(tenant, range);
    expect(res.statusCode).toBe(200);
    // Examined: every generation span without a sent cost (2 agent steps, 2 embeddings, 3 Vercel, 1 unknown).
    // Updated: the 5 gpt-4o-mini spans and the unknown one; the embeddings keep their price.
    expect(res.json().data).toEqual({ spansExamined: 8, spansUpdated: 6, spansPriced: 1, spansUnpriced: 0, tracesUpdated: 3 });

    const newSteps = (120 + 240) / 1e6;
    const after = { agent: newSteps, embeddings: embed, vercel: newSteps, paid: 0.25, unknown: (1000 * 2 + 100 * 2) / 1e6 };
    const now = await views(tenant, ids);
    for (const name of Object.keys(after) as Array<keyof typeof after>) {
      expect(now.listed[name], name).toBeCloseTo(after[name], 12);
      expect(now.details[name], name).toBeCloseTo(after[name], 12);
    }
    const newTotal = sum(Object.values(after));
    expect(now.analytics.totals.costUsd).toBeCloseTo(newTotal, 12);
    expect(now.analytics.totals.unpricedSpanCount).toBe(0);
    expect(now.stats['gpt-4o-mini']).toBeCloseTo(2 * newSteps + 0.25, 12);
    expect(now.stats['acme-x']).toBeCloseTo(after.unknown, 12);
    expect(cents(sum(Object.values(now.stats)))).toBe(cents(newTotal));
    expect(now.analytics.costBreakdown.bySource[0]).toMatchObject({ key: 'provided', costUsd: 0.25 });
    expect(now.analytics.costBreakdown.bySource[1].costUsd).toBeCloseTo(newTotal - 0.25, 12);

    // The provided span was never rewritten: one row version, its cost as sent.
    const paidDetail = (await get(ctx, tenant, `/api/traces/${ids.paid}`)).json().data.spans[0];
    expect(paidDetail).toMatchObject({ costUsd: 0.25, costSource: 'provided' });
    const versions = await ctx.clickhouse.query({
      query: 'SELECT count() AS n FROM spans WHERE workspace_id = {ws:String} AND trace_id = {id:String}',
      query_params: { ws: tenant.workspaceId, id: ids.paid },
      format: 'JSONEachRow',
    });
    expect(Number((await versions.json<{ n: string }>())[0]!.n)).toBe(1);
    // A repriced span tells the price it now carries, in the span's field order.
    const step = (await get(ctx, tenant, `/api/traces/${ids.vercel}`))
      .json()
      .data.spans.find((s: { spanId: string }) => s.spanId === 'ai.generateText.doGenerate-1');
    expect(step).toMatchObject({ costUsd: 120 / 1e6, costSource: 'computed', pricing: { source: 'workspace', inputPerMillion: 1 } });
    expect(Object.keys(step).indexOf('costSource')).toBe(Object.keys(step).indexOf('costUsd') + 1);

    // Repricing again with the same prices changes nothing.
    expect((await reprice(tenant, range)).json().data).toMatchObject({ spansExamined: 8, spansUpdated: 0, tracesUpdated: 0 });
  });

  it('reprices page by page: each page of traces summarized, spans of one trace across pages', async () => {
    const tenant = await ctx.tenant();
    const many = Array.from({ length: 3 }, (_, t) =>
      trace({
        traceId: uniqueId(`paged-${t}`),
        spans: Array.from({ length: 3 }, (_, i) =>
          node(`s${i}`, i === 0 ? undefined : 's0', i === 0 ? 'agent' : 'llm.chat', chat(1000, 1000)),
        ),
      }),
    );
    await post(ctx, tenant, many);
    const prices = new WorkspacePriceIndex([
      {
        id: '00000000-0000-4000-8000-000000000001',
        model: 'gpt-4o-mini',
        matchType: 'exact',
        provider: null,
        inputPerMillion: 1,
        outputPerMillion: 1,
        cacheReadPerMillion: null,
        cacheWritePerMillion: null,
        validFrom: null,
        createdAt: new Date().toISOString(),
      },
    ]);
    // Pages of 4 spans: 6 generation spans of 3 traces, a trace's spans split across pages.
    // Called directly, not through its route, so it first waits for the answered writes itself.
    await ctx.writer.settled();
    const result = await repriceRange(ctx.clickhouse, tenant.workspaceId, prices, range, 4);
    expect(result).toEqual({ spansExamined: 6, spansUpdated: 6, spansPriced: 0, spansUnpriced: 0, tracesUpdated: 3 });
    const analytics = (await get(ctx, tenant, `/api/traces/analytics?${query}`)).json().data;
    expect(analytics.totals.costUsd).toBeCloseTo(6 * 0.002, 12);
    for (const t of many) expect((await get(ctx, tenant, `/api/traces/${t.traceId}`)).json().data.costUsd).toBeCloseTo(0.004, 12);
  });
});
