import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/app.js';
import { get } from './traces-fixtures.js';

/**
 * The recorded OTLP requests of real instrumentations (otlp-corpus, beside the repository
 * checkout) come out priced: every generation span with a model and token counts gets the
 * library's price. The cases whose attributes the bridge does not map to token counts yet
 * (OpenLLMetry's `gen_ai.usage.prompt_tokens`, Langfuse's own attributes) are priced here as
 * the native spans their scenarios describe (same models, same tokens, the provider name
 * each library sends); once the bridge maps them they move to `replayed`.
 */

const corpus = path.resolve(import.meta.dirname, '../../../shared/otlp-corpus');
const cases = readdirSync(corpus, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
const replayed = ['openai-v2-default', 'openai-v2-latest', 'openinference-openai'];
/** Scenario calls of the other cases: response model, provider as sent, input and output tokens. */
const chat = (provider: string | undefined, input: number, output: number) => ({ kind: 'llm.chat', model: 'gpt-4o-mini-2024-07-18', ...(provider && { provider }), inputTokens: input, outputTokens: output });
const embed = (provider: string | undefined) => ({ kind: 'llm.embedding', model: 'text-embedding-3-small', ...(provider && { provider }), inputTokens: 7 });
const native: Record<string, Array<Record<string, unknown>>> = {
  'langfuse-sdk': [chat(undefined, 23, 11), chat(undefined, 23, 11), chat(undefined, 61, 18), chat(undefined, 23, 11), embed(undefined)],
  'openllmetry-0.54': [chat('openai', 23, 11), chat('openai', 23, 11), chat('openai', 61, 18), chat('openai', 23, 11), embed('openai')],
  'openllmetry-long-stream': [chat('openai', 23, 11)],
};

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

interface Span {
  spanId: string;
  kind: string;
  model?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  startTime: string;
  costUsd?: number;
  costSource?: string;
  pricing?: { providerId: string; modelId: string; source: string };
}

function expectPriced(name: string, traces: Array<{ costUsd?: number; spans: Span[] }>) {
  const generations = traces.flatMap((t) => t.spans).filter((s) => s.kind.startsWith('llm.') && s.model !== undefined && (s.inputTokens ?? s.outputTokens) !== undefined);
  expect(generations.length, name).toBeGreaterThan(0);
  for (const s of generations) {
    const expected = calcPrice({ input_tokens: s.inputTokens ?? 0, output_tokens: s.outputTokens ?? 0 }, s.model!, { providerId: 'openai', timestamp: new Date(s.startTime) });
    expect(expected, s.model).not.toBeNull();
    expect(s, `${name} ${s.spanId}`).toMatchObject({ costSource: 'computed', pricing: { providerId: 'openai', source: 'builtin' } });
    expect(s.costUsd).toBe(expected!.total_price);
  }
  const total = traces.reduce((sum, t) => sum + (t.costUsd ?? 0), 0);
  expect(total).toBeCloseTo(generations.reduce((sum, s) => sum + s.costUsd!, 0), 12);
}

describe('the OTLP corpus comes out priced', () => {
  it('covers every case of the corpus', () => {
    expect([...replayed, ...Object.keys(native)].sort()).toEqual(cases);
  });

  it.each(Object.keys(native))('%s (as the native spans of its scenario)', async (name) => {
    const tenant = await ctx.tenant();
    const spans = native[name]!.map((fields, i) => ({
      spanId: `s${i}`, name: `call ${i}`, startTime: '2026-11-22T10:00:00.000Z', endTime: '2026-11-22T10:00:01.000Z', durationMs: 1000, status: 'ok', ...fields,
    }));
    const res = await ctx.app.inject({ method: 'POST', url: '/api/traces', headers: tenant.headers, payload: { traces: [{ traceId: `native-${name}`, source: 'otel', spans }] } });
    expect(res.json().data.accepted).toBe(1);
    expectPriced(name, (await get(ctx, tenant, '/api/traces?include=spans&limit=100')).json().data);
  });

  it.each(replayed)('%s (replayed over OTLP)', async (name) => {
    const tenant = await ctx.tenant();
    const dir = path.join(corpus, name);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.meta.json')).sort()) {
      const meta = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { path: string; contentType: string };
      if (!meta.path.endsWith('/v1/traces')) continue;
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/traces/otlp/v1/traces',
        headers: { ...tenant.headers, 'content-type': meta.contentType },
        payload: readFileSync(path.join(dir, file.replace('.meta.json', '.body'))),
      });
      expect(res.statusCode, `${name}/${file}`).toBe(200);
    }
    expectPriced(name, (await get(ctx, tenant, '/api/traces?include=spans&limit=100')).json().data);
  });
});
