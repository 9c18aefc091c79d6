import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/app.js';
import { corpusDir } from '../support/otlp-corpus.js';
import { get } from './traces-fixtures.js';

/**
 * The recorded OTLP requests of real instrumentations (otlp-corpus, beside the repository
 * checkout) come out priced: every case replayed over OTLP, every generation span with a
 * model and token counts gets the library's price.
 */

const corpus = corpusDir;
const cases = readdirSync(corpus, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

interface Span {
  spanId: string;
  parentSpanId?: string;
  kind: string;
  model?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  startTime: string;
  costUsd?: number;
  costSource?: string;
  pricing?: { providerId: string; modelId: string; source: string };
}

function expectPriced(name: string, traces: Array<{ costUsd?: number; spans: Span[] }>) {
  const generations = traces
    .flatMap((t) => t.spans)
    .filter((s) => s.kind.startsWith('llm.') && s.model !== undefined && (s.inputTokens ?? s.outputTokens) !== undefined);
  expect(generations.length, name).toBeGreaterThan(0);
  for (const s of generations) {
    // The cases call OpenAI's models, and one Anthropic's (with cache reads and writes).
    const providerId = s.provider ?? 'openai';
    const usage = {
      input_tokens: s.inputTokens ?? 0,
      output_tokens: s.outputTokens ?? 0,
      ...(s.cacheReadTokens ? { cache_read_tokens: s.cacheReadTokens } : {}),
      ...(s.cacheWriteTokens ? { cache_write_tokens: s.cacheWriteTokens } : {}),
    };
    const expected = calcPrice(usage, s.model!, { providerId, timestamp: new Date(s.startTime) });
    expect(expected, s.model).not.toBeNull();
    expect(s, `${name} ${s.spanId}`).toMatchObject({ costSource: 'computed', pricing: { providerId, source: 'builtin' } });
    expect(s.costUsd).toBe(expected!.total_price);
  }
  // One model call recorded twice (an LLM SDK's own span under the instrumentation's) is counted once.
  const calls = generations.filter((s) => !generations.some((outer) => outer.spanId === s.parentSpanId));
  const total = traces.reduce((sum, t) => sum + (t.costUsd ?? 0), 0);
  expect(total).toBeCloseTo(
    calls.reduce((sum, s) => sum + s.costUsd!, 0),
    12,
  );
}

describe('the OTLP corpus comes out priced', () => {
  it.each(cases)('%s (replayed over OTLP)', async (name) => {
    const tenant = await ctx.tenant();
    const dir = path.join(corpus, name);
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith('.meta.json'))
      .sort()) {
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
