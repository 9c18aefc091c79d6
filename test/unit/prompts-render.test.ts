import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../../src/contract/index.js';
import { renderPromptTemplates } from '../../src/prompts/model/render.js';

describe('renderTemplate', () => {
  it('fills placeholders', () => {
    expect(renderTemplate('Hello {name}, you are {age}.', { name: 'Ada', age: 36 })).toEqual({
      text: 'Hello Ada, you are 36.',
      placeholders: ['name', 'age'],
      missing: [],
    });
  });

  it('fills a repeated placeholder everywhere and lists it once', () => {
    const r = renderTemplate('{x}+{x}={y} ({x})', { x: 1 });
    expect(r.text).toBe('1+1={y} (1)');
    expect(r.placeholders).toEqual(['x', 'y']);
    expect(r.missing).toEqual(['y']);
  });

  it('keeps missing placeholders as written', () => {
    expect(renderTemplate('Dear {title} {name}', { name: 'Bo' })).toMatchObject({ text: 'Dear {title} Bo', missing: ['title'] });
  });

  it('reads {{ and }} as literal braces', () => {
    expect(renderTemplate('{{name}} is {name}', { name: 'x' }).text).toBe('{name} is x');
    expect(renderTemplate('{{{name}}}', { name: 'x' }).text).toBe('{x}');
    expect(renderTemplate('json: {{"a": 1}}', {}).text).toBe('json: {"a": 1}');
    expect(renderTemplate('{{name}}', {}).missing).toEqual([]);
  });

  it('keeps braces that open no placeholder', () => {
    expect(renderTemplate('{ "a": {b} }', { b: 2 }).text).toBe('{ "a": 2 }');
    expect(renderTemplate('{not a name} {1abc} {} {a-b} } {', {}).text).toBe('{not a name} {1abc} {} {a-b} } {');
    expect(renderTemplate('{unclosed', { unclosed: 'x' }).text).toBe('{unclosed');
  });

  it('treats identifiers with underscores and digits as names; values are not re-rendered', () => {
    expect(renderTemplate('{_a1} {snake_case}', { _a1: '{snake_case}', snake_case: 'v' }).text).toBe('{snake_case} v');
  });

  it('renders booleans and numbers as text; an inherited name is not a variable', () => {
    expect(renderTemplate('{b} {n} {toString}', { b: false, n: 0.5 })).toMatchObject({
      text: 'false 0.5 {toString}',
      missing: ['toString'],
    });
  });

  it('handles an empty template', () => {
    expect(renderTemplate('', { a: 1 })).toEqual({ text: '', placeholders: [], missing: [] });
  });
});

describe('renderPromptTemplates', () => {
  it('reports missing across both templates once, and unused variables', () => {
    const r = renderPromptTemplates(
      { systemPrompt: 'You help {user} with {topic}.', humanPrompt: '{question} about {topic} by {user}?' },
      { user: 'Ada', extra: 'x', other: 1 },
    );
    expect(r).toEqual({
      systemPrompt: 'You help Ada with {topic}.',
      humanPrompt: '{question} about {topic} by Ada?',
      missing: ['topic', 'question'],
      unused: ['extra', 'other'],
    });
  });

  it('answers a null human prompt when the version has none', () => {
    expect(renderPromptTemplates({ systemPrompt: 'Hi', humanPrompt: null }, { a: 'b' })).toEqual({
      systemPrompt: 'Hi',
      humanPrompt: null,
      missing: [],
      unused: ['a'],
    });
  });
});
