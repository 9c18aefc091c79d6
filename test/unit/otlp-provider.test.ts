import { describe, expect, it } from 'vitest';
import { normalizeProvider } from '../../src/traces/otlp/provider.js';

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
    ['aws.bedrock', 'bedrock'],
    ['gcp.vertex_ai', 'vertex_ai'],
    ['mistral_ai', 'mistral'],
    ['groq', 'groq'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeProvider(input)).toBe(expected);
  });
});
