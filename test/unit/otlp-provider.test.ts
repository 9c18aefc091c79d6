import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { firstParty } from '../../src/traces/cost/builtin.js';
import { modelFamilies, normalizeProvider, providerOfModel } from '../../src/traces/cost/provider.js';

// One function and one table for the OTLP mapping, stats and pricing (the price table's provider ids).
describe('normalizeProvider', () => {
  it.each([
    ['openai', 'openai'],
    ['OpenAI', 'openai'],
    ['openai.chat', 'openai'],
    ['openai.embedding', 'openai'],
    ['openai.responses', 'openai'],
    ['anthropic.messages', 'anthropic'],
    ['google.generative-ai', 'google'],
    ['az.ai.openai', 'azure'],
    ['aws.bedrock', 'aws'],
    ['gcp.vertex_ai', 'google'],
    ['mistral_ai', 'mistral'],
    ['groq', 'groq'],
    ['constructor', 'constructor'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeProvider(input)).toBe(expected);
  });
});

// Spans that name a model and no provider (the Langfuse SDKs) take the provider of its family.
describe('providerOfModel', () => {
  it.each([
    ['gpt-4o-mini-2024-07-18', 'openai'],
    ['GPT-4o', 'openai'],
    ['o3-mini', 'openai'],
    ['o1', 'openai'],
    ['text-embedding-3-small', 'openai'],
    ['openai/gpt-4o', 'openai'],
    ['claude-3-5-sonnet-20241022', 'anthropic'],
    ['anthropic/claude-sonnet-4', 'anthropic'],
    ['gemini-2.0-flash', 'google'],
    ['open-mistral-nemo', 'mistral'],
    ['mistral-large-latest', 'mistral'],
    ['command-r-plus', 'cohere'],
    ['embed-english-v3.0', 'cohere'],
    ['grok-2', 'x-ai'],
    ['deepseek-chat', 'deepseek'],
  ])('%s → %s', (model, provider) => {
    expect(providerOfModel(model)).toBe(provider);
  });
  it.each(['bad-model', 'text-embedding', 'gpt4all-j', 'o5', 'llama-3.1-8b', 'constructor', 'toString-x', ''])(
    '%s names no known family',
    (model) => {
      expect(providerOfModel(model)).toBeUndefined();
    },
  );
  it('is listed whole in the API reference (Cost and prices)', () => {
    const reference = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const section = reference.slice(reference.indexOf('**Provider from the model name.**'), reference.indexOf('With a provider, only'));
    for (const [family, provider] of Object.entries(modelFamilies))
      expect(section).toMatch(new RegExp(`\\| [^|\\n]*\`${family}\`[^|\\n]* \\| +\`${provider}\` +\\|`));
  });
  it('names only the first-party providers of the price table', () => {
    for (const [family, provider] of Object.entries(modelFamilies)) expect(firstParty, family).toContain(provider);
  });
});
