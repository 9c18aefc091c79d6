import { calcPrice, findProvider, type MatchLogic } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { builtinQuote, builtinVersion } from '../../src/traces/cost/builtin.js';
import { normalizeProvider } from '../../src/traces/cost/provider.js';
import { tokenUsage, type TokenUsage } from '../../src/traces/cost/usage.js';

/** Provider ids of the bundled table, to walk every model it prices. */
const providerIds = [
  'anthropic',
  'arcee',
  'avian',
  'aws',
  'azure',
  'baseten',
  'cerebras',
  'cloudflare',
  'cohere',
  'deepseek',
  'fireworks',
  'google',
  'groq',
  'minimax',
  'mistral',
  'moonshotai',
  'novita',
  'openai',
  'openrouter',
  'perplexity',
  'together',
  'x-ai',
  'zai',
  'zhipuai',
];

/** A model name the match accepts (its first `equals` or `starts_with`), else the model id. */
function nameFor(logic: MatchLogic, fallback: string): string {
  if ('equals' in logic) return logic.equals;
  if ('starts_with' in logic) return logic.starts_with;
  if ('or' in logic && logic.or[0]) return nameFor(logic.or[0], fallback);
  if ('and' in logic && logic.and[0]) return nameFor(logic.and[0], fallback);
  return fallback;
}

const usages: TokenUsage[] = [
  { input: 1234, output: 567, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
  { input: 5000, output: 900, cacheRead: 3000, cacheWrite: 1200, reasoning: 400 },
  { input: 250_000, output: 3000, cacheRead: 100_000, cacheWrite: 0, reasoning: 2000 },
];
const library = (u: TokenUsage) => ({
  input_tokens: u.input,
  output_tokens: u.output,
  cache_read_tokens: u.cacheRead,
  cache_write_tokens: u.cacheWrite,
  output_reasoning_tokens: u.reasoning,
});

describe('built-in prices', () => {
  it('prices every model of the table exactly as the library does', () => {
    const at = new Date('2026-06-01T15:30:00Z');
    let compared = 0;
    for (const id of providerIds) {
      const provider = findProvider({ providerId: id });
      expect(provider, id).toBeDefined();
      for (const model of provider!.models) {
        const name = nameFor(model.match, model.id);
        for (const usage of usages) {
          let expected: ReturnType<typeof calcPrice>;
          try {
            expected = calcPrice(library(usage), name, { providerId: id, timestamp: at });
          } catch {
            expected = null;
          }
          const quote = builtinQuote(id, name, usage, at);
          if (expected === null) {
            expect(quote, `${id}/${name}`).toBeNull();
            continue;
          }
          expect(quote, `${id}/${name}`).not.toBeNull();
          expect(quote!.costUsd, `${id}/${name} ${JSON.stringify(usage)}`).toBe(expected.total_price);
          expect(quote!.pricing).toMatchObject({
            providerId: expected.provider.id,
            modelId: expected.model.id,
            source: 'builtin',
            version: builtinVersion,
          });
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('charges cache reads and writes at their own rates and the rest of input at the input rate', () => {
    const at = new Date();
    const usage = tokenUsage({ inputTokens: 10_000, outputTokens: 2000, cacheReadTokens: 6000, cacheWriteTokens: 1000 })!;
    const quote = builtinQuote('anthropic', 'claude-sonnet-4-20250514', usage, at)!;
    const { inputPerMillion, outputPerMillion, cacheReadPerMillion, cacheWritePerMillion } = quote.pricing;
    expect(cacheReadPerMillion).toBeLessThan(inputPerMillion);
    expect(cacheWritePerMillion).toBeGreaterThan(inputPerMillion);
    const byHand = (3000 * inputPerMillion + 6000 * cacheReadPerMillion! + 1000 * cacheWritePerMillion! + 2000 * outputPerMillion) / 1e6;
    expect(quote.costUsd).toBeCloseTo(byHand, 12);
    const library = calcPrice(
      { input_tokens: 10_000, output_tokens: 2000, cache_read_tokens: 6000, cache_write_tokens: 1000 },
      'claude-sonnet-4-20250514',
      { providerId: 'anthropic', timestamp: at },
    )!;
    expect(quote.costUsd).toBe(library.total_price);
  });

  it('counts reasoning as output, and reads parts sent beside their total as added to it', () => {
    const at = new Date();
    const withReasoning = builtinQuote(
      'openai',
      'o3-mini',
      tokenUsage({ inputTokens: 1000, outputTokens: 3000, reasoningTokens: 2500 })!,
      at,
    )!;
    const plain = builtinQuote('openai', 'o3-mini', tokenUsage({ inputTokens: 1000, outputTokens: 3000 })!, at)!;
    expect(withReasoning.costUsd).toBe(plain.costUsd);
    // Gemini-style: reasoning reported beside the output; Anthropic-style: cache beside the input.
    expect(tokenUsage({ inputTokens: 100, outputTokens: 50, reasoningTokens: 200 })).toMatchObject({ output: 250 });
    expect(tokenUsage({ inputTokens: 100, cacheReadTokens: 900, outputTokens: 1 })).toMatchObject({ input: 1000, cacheRead: 900 });
    expect(tokenUsage({ totalTokens: 42 })).toMatchObject({ input: 42, output: 0 });
    expect(tokenUsage({ model: 'x' } as never)).toBeNull();
  });

  it('leaves unknown models and providers unpriced', () => {
    const usage = { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
    expect(builtinQuote('openai', 'no-such-model-anywhere', usage, new Date())).toBeNull();
    expect(builtinQuote('ollama', 'gpt-4o', usage, new Date())).toBeNull();
    expect(builtinQuote(undefined, 'gpt-4o', usage, new Date())?.pricing.providerId).toBe('openai');
    // Without a provider, a model the table's name matching misses is looked up at first-party providers.
    expect(builtinQuote(undefined, 'text-embedding-3-small', usage, new Date())?.pricing.providerId).toBe('openai');
    expect(builtinQuote(undefined, 'claude-3-5-haiku-latest', usage, new Date())?.pricing.providerId).toBe('anthropic');
    expect(builtinQuote('openai', 'openai/gpt-4o', usage, new Date())?.pricing.modelId).toBe('gpt-4o');
  });
});

describe('provider names', () => {
  it.each([
    ['openai.chat', 'openai'],
    ['openai.responses', 'openai'],
    ['OpenAI', 'openai'],
    ['anthropic.messages', 'anthropic'],
    ['azure.ai.openai', 'azure'],
    ['azure.ai.inference', 'azure'],
    ['azure-openai.chat', 'azure'],
    ['aws.bedrock', 'aws'],
    ['amazon-bedrock', 'aws'],
    ['gcp.vertex_ai', 'google'],
    ['gcp.gemini', 'google'],
    ['google.generative-ai', 'google'],
    ['mistral_ai', 'mistral'],
    ['x_ai', 'x-ai'],
    ['deepseek', 'deepseek'],
    ['my-gateway', 'my-gateway'],
  ])('%s → %s', (name, id) => expect(normalizeProvider(name)).toBe(id));
});
