import { describe, expect, it } from 'vitest';
import { normalizeProvider } from '../../src/traces/cost/provider.js';

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
  ])('%s → %s', (input, expected) => {
    expect(normalizeProvider(input)).toBe(expected);
  });
});
