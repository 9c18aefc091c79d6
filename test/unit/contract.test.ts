import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SPAN_KINDS, renderTemplate, templateVariables } from '../../src/contract/index.js';
import { renderPromptTemplates } from '../../src/prompts/model/render.js';
import { spanKindSchema, spanKinds } from '../../src/traces/model/schemas.js';
import { LoupeError, SPAN_KINDS as sdkSpanKinds, render, renderTemplate as sdkRenderTemplate } from '../../packages/sdk/src/index.js';

/** The cases every implementation of the contract runs (the Python SDK's tests read the same file). */
interface ContractVectors {
  spanKinds: string[];
  templates: Array<{
    name: string;
    template: string;
    variables: Record<string, unknown>;
    text: string;
    placeholders: string[];
    missing: string[];
  }>;
  prompts: Array<{
    name: string;
    systemPrompt: string;
    humanPrompt: string | null;
    /** Values the service's render endpoint takes. */
    variables: Record<string, string | number | boolean>;
    systemText: string;
    humanText: string | null;
    missing: string[];
  }>;
}
const vectors = JSON.parse(
  readFileSync(new URL('../../packages/sdk/src/contract/vectors.json', import.meta.url), 'utf8'),
) as ContractVectors;

describe('the shared contract vectors', () => {
  it('list the span kinds of the contract', () => {
    expect(vectors.spanKinds).toEqual([...SPAN_KINDS]);
  });

  it.each(vectors.templates.map((v) => [v.name, v] as const))('template: %s', (_name, v) => {
    expect(renderTemplate(v.template, v.variables)).toEqual({ text: v.text, placeholders: v.placeholders, missing: v.missing });
  });

  it.each(vectors.prompts.map((v) => [v.name, v] as const))('prompt: %s (server and SDK)', (_name, v) => {
    const prompt = { systemPrompt: v.systemPrompt, humanPrompt: v.humanPrompt };
    const server = renderPromptTemplates(prompt, v.variables);
    expect(server).toMatchObject({ systemPrompt: v.systemText, humanPrompt: v.humanText, missing: v.missing });
    if (v.missing.length > 0) {
      expect(() => render(prompt, v.variables)).toThrow(LoupeError);
    } else {
      expect(render(prompt, v.variables)).toMatchObject({ systemPrompt: v.systemText, humanPrompt: v.humanText ?? undefined });
    }
  });
});

describe('the contract shared by the server and the SDK', () => {
  it('has one list of the 15 span kinds, the one the server validates and the SDK types', () => {
    expect(SPAN_KINDS).toHaveLength(15);
    expect(spanKinds).toBe(SPAN_KINDS);
    expect(sdkSpanKinds).toBe(SPAN_KINDS);
    for (const kind of SPAN_KINDS) expect(spanKindSchema.parse(kind)).toBe(kind);
    expect(spanKindSchema.safeParse('llm').success).toBe(false);
  });

  it('renders a string as it is and any other value as its JSON', () => {
    const variables = { s: 'a "quoted" {x}', n: 36, f: 0.5, b: false, o: { a: [1, 'x'] }, z: null };
    expect(renderTemplate('{s}|{n}|{f}|{b}|{o}|{z}', variables).text).toBe('a "quoted" {x}|36|0.5|false|{"a":[1,"x"]}|null');
  });

  it('leaves a placeholder without a value as written and reports it; undefined counts as no value', () => {
    expect(renderTemplate('{a} {b} {c} {a}', { a: 1, c: undefined })).toEqual({
      text: '1 {b} {c} 1',
      placeholders: ['a', 'b', 'c'],
      missing: ['b', 'c'],
    });
    expect(templateVariables('{{x}} {y} { z } {y}')).toEqual(['y']);
  });

  it('gives the same text on both sides for the same prompt and variables', () => {
    const prompt = { systemPrompt: 'You help {user} ({age}, {{literal}}) with { "json": {topic} }.', humanPrompt: '{question}?' };
    const variables = { user: 'Ada', age: 36, topic: 'billing', question: 'Why', vip: true };
    const server = renderPromptTemplates(prompt, variables);
    const sdk = render(prompt, variables);
    expect(sdk.systemPrompt).toBe(server.systemPrompt);
    expect(sdk.humanPrompt).toBe(server.humanPrompt);
    expect(server.systemPrompt).toBe('You help Ada (36, {literal}) with { "json": billing }.');
    expect(sdkRenderTemplate).toBe(renderTemplate);
  });

  it('reports the same missing names on both sides; the SDK render refuses them, the server answers them', () => {
    const prompt = { systemPrompt: 'Hi {user}, {topic}', humanPrompt: '{question} {user}' };
    expect(renderPromptTemplates(prompt, { user: 'x' }).missing).toEqual(['topic', 'question']);
    let thrown: unknown;
    try {
      render(prompt, { user: 'x' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LoupeError);
    expect((thrown as LoupeError).details).toEqual({ missing: ['topic', 'question'] });
  });
});
