import { calcPrice } from '@pydantic/genai-prices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinVersion } from '../../src/traces/cost/builtin.js';
import { createTestContext, type TestContext } from '../support/app.js';
import { get, post, span, trace } from './traces-fixtures.js';

/**
 * Cost at ingest on the real stores: computed by the built-in table exactly as the library
 * computes it, cached and reasoning tokens, provided costs kept, unpriced models listed.
 */

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const at = '2026-03-02T10:00:00.000Z';
const generation = (overrides: Record<string, unknown>) =>
  span({ kind: 'llm.chat', startTime: at, endTime: '2026-03-02T10:00:01.000Z', ...overrides });

async function detailOf(tenant: Awaited<ReturnType<TestContext['tenant']>>, traceId: string) {
  const res = await get(ctx, tenant, `/api/traces/${traceId}`);
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

describe('cost at ingest', () => {
  it('computes the cost of known models as the library does, with the price used', async () => {
    const tenant = await ctx.tenant();
    const cases = [
      { model: 'gpt-4o-mini', provider: 'openai', inputTokens: 1200, outputTokens: 300, usage: { input_tokens: 1200, output_tokens: 300 } },
      // Vercel AI SDK provider name; cached input at its own rate.
      {
        model: 'gpt-4o',
        provider: 'openai.chat',
        inputTokens: 5000,
        outputTokens: 200,
        cacheReadTokens: 4000,
        usage: { input_tokens: 5000, output_tokens: 200, cache_read_tokens: 4000 },
        libraryProvider: 'openai',
      },
      {
        model: 'claude-sonnet-4-20250514',
        provider: 'anthropic',
        inputTokens: 9000,
        outputTokens: 800,
        cacheReadTokens: 6000,
        cacheWriteTokens: 2000,
        usage: { input_tokens: 9000, output_tokens: 800, cache_read_tokens: 6000, cache_write_tokens: 2000 },
      },
      // Reasoning is part of the output: the same price as output alone.
      {
        model: 'o3-mini',
        provider: 'openai',
        inputTokens: 700,
        outputTokens: 2500,
        reasoningTokens: 2000,
        usage: { input_tokens: 700, output_tokens: 2500 },
      },
      // OpenTelemetry's provider name for Azure OpenAI.
      {
        model: 'gpt-4o',
        provider: 'azure.ai.openai',
        inputTokens: 100,
        outputTokens: 10,
        usage: { input_tokens: 100, output_tokens: 10 },
        libraryProvider: 'azure',
      },
    ];
    for (const { usage, libraryProvider, ...fields } of cases) {
      const t = trace({ spans: [generation({ spanId: 'g', ...fields })] });
      expect((await post(ctx, tenant, [t])).json().data.accepted).toBe(1);
      const expected = calcPrice(usage, fields.model, { providerId: libraryProvider ?? fields.provider, timestamp: new Date(at) })!;
      const detail = await detailOf(tenant, t.traceId);
      const [s] = detail.spans;
      expect(s.costUsd, fields.model).toBe(expected.total_price);
      expect(s.costSource).toBe('computed');
      expect(s.pricing).toMatchObject({
        providerId: expected.provider.id,
        modelId: expected.model.id,
        source: 'builtin',
        version: builtinVersion,
        inputPerMillion: expected.model_price.input_mtok,
        outputPerMillion: expected.model_price.output_mtok,
      });
      expect(detail.costUsd).toBe(expected.total_price);
      expect(s).toMatchObject({ inputTokens: fields.inputTokens, outputTokens: fields.outputTokens });
    }
  });

  it('keeps a sent cost as provided, prices nothing that is not a generation, ignores a sent costSource or pricing', async () => {
    const tenant = await ctx.tenant();
    const t = trace({
      spans: [
        generation({ spanId: 'paid', model: 'gpt-4o', provider: 'openai', inputTokens: 1000, outputTokens: 100, costUsd: 0.5 }),
        generation({
          spanId: 'forged',
          model: 'gpt-4o',
          provider: 'openai',
          inputTokens: 1000,
          outputTokens: 100,
          costSource: 'provided',
          pricing: { source: 'workspace', priceId: 'x', modelId: 'gpt-4o', providerId: 'openai', inputPerMillion: 0, outputPerMillion: 0 },
        }),
        span({ spanId: 'tool', kind: 'tool', startTime: at, endTime: at, model: 'gpt-4o', inputTokens: 5 }),
        generation({ spanId: 'no-tokens', model: 'gpt-4o', provider: 'openai' }),
      ],
    });
    expect((await post(ctx, tenant, [t])).json().data).toMatchObject({ accepted: 1, rejected: 0 });
    const spans = Object.fromEntries((await detailOf(tenant, t.traceId)).spans.map((s: any) => [s.spanId, s]));
    expect(spans.paid).toMatchObject({ costUsd: 0.5, costSource: 'provided' });
    expect(spans.paid.pricing).toBeUndefined();
    const builtin = calcPrice({ input_tokens: 1000, output_tokens: 100 }, 'gpt-4o', { providerId: 'openai', timestamp: new Date(at) })!;
    expect(spans.forged).toMatchObject({ costUsd: builtin.total_price, costSource: 'computed', pricing: { source: 'builtin' } });
    expect(spans.tool.costSource).toBeUndefined();
    expect(spans.tool.costUsd).toBeUndefined();
    expect(spans['no-tokens'].costSource).toBeUndefined();
    const detail = await detailOf(tenant, t.traceId);
    expect(detail.costUsd).toBeCloseTo(0.5 + builtin.total_price, 12);
  });

  it('leaves unknown models without cost and lists them, most used first', async () => {
    const tenant = await ctx.tenant();
    const unknown = (id: string, model: string, tokens: number) =>
      generation({ spanId: id, model, provider: 'acme', inputTokens: tokens, outputTokens: 1, totalTokens: tokens + 1 });
    const t1 = trace({ spans: [unknown('a', 'acme-large', 100), unknown('b', 'acme-large', 50), unknown('c', 'acme-small', 10)] });
    const t2 = trace({
      spans: [
        unknown('d', 'acme-large', 1),
        generation({ spanId: 'e', model: 'gpt-4o-mini', provider: 'openai', inputTokens: 5, outputTokens: 5 }),
      ],
    });
    await post(ctx, tenant, [t1, t2]);
    const detail = await detailOf(tenant, t1.traceId);
    expect(detail.spans.every((s: any) => s.costSource === 'none' && s.costUsd === undefined && s.pricing === undefined)).toBe(true);
    expect(detail.costUsd).toBeUndefined();

    const range = 'startAfter=2026-03-01T00:00:00Z&startBefore=2026-03-03T00:00:00Z';
    const res = await get(ctx, tenant, `/api/models/unpriced?${range}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.models).toEqual([
      {
        model: 'acme-large',
        provider: 'acme',
        spanCount: 3,
        inputTokens: 151,
        outputTokens: 3,
        totalTokens: 154,
        firstSeen: at,
        lastSeen: at,
      },
      {
        model: 'acme-small',
        provider: 'acme',
        spanCount: 1,
        inputTokens: 10,
        outputTokens: 1,
        totalTokens: 11,
        firstSeen: at,
        lastSeen: at,
      },
    ]);
    // Outside the range: nothing. Another workspace: nothing.
    expect(
      (await get(ctx, tenant, '/api/models/unpriced?startAfter=2026-04-01T00:00:00Z&startBefore=2026-04-02T00:00:00Z')).json().data.models,
    ).toEqual([]);
    expect((await get(ctx, await ctx.tenant(), `/api/models/unpriced?${range}`)).json().data.models).toEqual([]);
    expect((await get(ctx, tenant, '/api/models/unpriced?startAfter=yesterday')).statusCode).toBe(400);

    const analytics = (await get(ctx, tenant, `/api/traces/analytics?${range}`)).json().data;
    expect(analytics.totals.unpricedSpanCount).toBe(4);
  });
});
