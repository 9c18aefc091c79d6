import { describe, expect, it } from 'vitest';
import { checkSchema } from '../../src/evaluators/api/schemas.js';
import { compileCheckPattern, runCheck } from '../../src/evaluators/model/checks.js';
import { parseJudgeAnswer } from '../../src/evaluators/model/judge-answer.js';
import { readTargetField } from '../../src/evaluators/model/target-fields.js';
import { createSecretBox, keyTail } from '../../src/evaluators/model/secret-box.js';
import { isSampled } from '../../src/evaluators/service/evaluate.js';
import { validateAgainstOutputSchema } from '../../src/prompts/model/output-schema.js';
import type { EvaluationTarget } from '../../src/contract/evaluation-targets.js';

const target = (over: Partial<EvaluationTarget> = {}): EvaluationTarget => ({
  traceId: 't1',
  input: 'What is 2 + 2?',
  output: '{"answer": 4}',
  metadata: { user: { tier: 'gold' } },
  attributes: { 'gen_ai.request.model': 'gpt-x' },
  durationMs: 1200,
  costUsd: 0.004,
  ...over,
});
const check = (raw: unknown) => checkSchema.parse(raw);
const validate = (schema: Record<string, unknown>, value: unknown) =>
  validateAgainstOutputSchema(schema, value).map((p) => `/${p.path.join('/')} ${p.message}`);

describe('built-in checks', () => {
  it('json_parse: true for JSON text, false for prose', () => {
    expect(runCheck(check({ type: 'json_parse' }), target()).value).toBe(true);
    expect(runCheck(check({ type: 'json_parse' }), target({ output: 'four' })).value).toBe(false);
    expect(runCheck(check({ type: 'json_parse', field: 'metadata.missing' }), target()).value).toBe(false);
  });

  it('regex and contains', () => {
    expect(runCheck(check({ type: 'regex', pattern: '"answer":\\s*\\d+' }), target()).value).toBe(true);
    expect(runCheck(check({ type: 'regex', pattern: '^four$' }), target()).value).toBe(false);
    expect(runCheck(check({ type: 'regex', pattern: 'WHAT', flags: 'i', field: 'input' }), target()).value).toBe(true);
    // A pattern that backtracks exponentially in a backtracking engine answers at once on RE2.
    expect(runCheck(check({ type: 'regex', pattern: '^(a+)+$', field: 'output' }), target({ output: `${'a'.repeat(5000)}b` })).value).toBe(
      false,
    );
    expect(() => compileCheckPattern('(a)\\1')).toThrow();
    expect(runCheck(check({ type: 'contains', text: 'ANSWER' }), target()).value).toBe(false);
    expect(runCheck(check({ type: 'contains', text: 'ANSWER', caseSensitive: false }), target()).value).toBe(true);
    expect(runCheck(check({ type: 'contains', text: 'gold', field: 'metadata.user.tier' }), target()).value).toBe(true);
  });

  it('length: a number without bounds, a boolean within them (characters, not bytes)', () => {
    expect(runCheck(check({ type: 'length', field: 'input' }), target()).value).toBe(14);
    expect(runCheck(check({ type: 'length', max: 2 }), target({ output: 'éé' })).value).toBe(true);
    expect(runCheck(check({ type: 'length', min: 3 }), target({ output: 'éé' })).value).toBe(false);
  });

  it('latency and cost thresholds', () => {
    expect(runCheck(check({ type: 'latency', maxMs: 1200 }), target()).value).toBe(true);
    expect(runCheck(check({ type: 'latency', maxMs: 1199 }), target()).value).toBe(false);
    expect(runCheck(check({ type: 'latency', maxMs: 10 }), target({ durationMs: null })).value).toBe(false);
    expect(runCheck(check({ type: 'cost', maxUsd: 0.005 }), target()).value).toBe(true);
    expect(runCheck(check({ type: 'cost', maxUsd: 0.001 }), target()).value).toBe(false);
  });

  it("output_schema: the output against the prompt version's schema", () => {
    const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] };
    const c = check({ type: 'output_schema', prompt: { name: 'p' } });
    expect(runCheck(c, target(), { schema, validate }).value).toBe(true);
    const wrong = runCheck(c, target({ output: '{"answer": "four"}' }), { schema, validate });
    expect(wrong.value).toBe(false);
    expect(wrong.comment).toContain('/answer');
    expect(runCheck(c, target({ output: 'not json' }), { schema, validate }).value).toBe(false);
    expect(runCheck(c, target(), { schema: null, validate }).value).toBe(false);
  });

  it('reads attribute keys that hold dots', () => {
    expect(readTargetField(target(), 'attributes.gen_ai.request.model')).toBe('gpt-x');
    expect(readTargetField(target(), 'metadata.user.none')).toBeUndefined();
  });
});

describe('judge answers', () => {
  it('parses JSON text and tool input; refuses anything else', () => {
    expect(parseJudgeAnswer('{"value": 0.8, "reasoning": "close"}', 'numeric')).toEqual({ value: 0.8, reasoning: 'close' });
    expect(parseJudgeAnswer({ value: true, reasoning: 'yes' }, 'boolean')).toEqual({ value: true, reasoning: 'yes' });
    expect(parseJudgeAnswer('looks good', 'numeric')).toMatch(/not JSON/);
    expect(parseJudgeAnswer('{"value": "high", "reasoning": "x"}', 'numeric')).toMatch(/malformed: value/);
    expect(parseJudgeAnswer(undefined, 'boolean')).toMatch(/malformed/);
  });
});

describe('secret box', () => {
  const box = createSecretBox('a'.repeat(64));
  it('opens what it sealed; the sealed text does not hold the key; a fresh IV each time', () => {
    const sealed = box.seal('sk-secret-1234');
    expect(sealed).not.toContain('sk-secret');
    expect(box.seal('sk-secret-1234')).not.toBe(sealed);
    expect(box.open(sealed)).toBe('sk-secret-1234');
    expect(keyTail('sk-secret-1234')).toBe('1234');
  });
  it('refuses a changed value or another key', () => {
    const sealed = box.seal('sk-secret-1234');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => createSecretBox('b'.repeat(64)).open(sealed)).toThrow();
  });
});

describe('sampling', () => {
  it('is the same decision every time, and near the rate over many traces', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `trace-${i}`);
    const taken = ids.filter((id) => isSampled('ev', id, 0.25));
    expect(taken).toEqual(ids.filter((id) => isSampled('ev', id, 0.25)));
    expect(taken.length).toBeGreaterThan(400);
    expect(taken.length).toBeLessThan(600);
    expect(ids.every((id) => isSampled('ev', id, 1))).toBe(true);
    expect(ids.some((id) => isSampled('ev', id, 0))).toBe(false);
  });
});
