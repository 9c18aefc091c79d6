import { describe, expect, it } from 'vitest';
import { bodyOf, initialState, type EvaluatorDefinition } from '../../web/src/lib/evaluator-form.js';

/** The evaluator form edits what it is given: an evaluator put in the form comes out as the same body. */

const target = {
  kind: 'traces' as const,
  filters: { name: 'qa', tags: ['a', 'b'], environment: 'prod' },
  samplingRate: 0.25,
  delaySeconds: 5,
};

describe('evaluator form', () => {
  it('keeps a judge: connection, model, prompt label, variables, score and targets', () => {
    const judge: EvaluatorDefinition = {
      name: 'correctness',
      type: 'llm_judge',
      judge: {
        connectionId: 'c1',
        model: 'm2',
        prompt: { name: 'grader', label: 'production' },
        variables: { q: 'input', a: 'output.text' },
      },
      score: { name: 'correctness', dataType: 'numeric' },
      target,
    };
    expect(bodyOf(initialState(judge), ['q', 'a'])).toEqual(judge);
    // A prompt version pinned by version; only the prompt's variables are sent, unmapped as ''.
    const pinned = { ...judge, judge: { ...judge.judge!, prompt: { name: 'grader', version: '1.2.0' } } };
    expect(bodyOf(initialState(pinned), ['q', 'a', 'context']).judge).toMatchObject({
      prompt: { name: 'grader', version: '1.2.0' },
      variables: { q: 'input', a: 'output.text', context: '' },
    });
  });

  it.each([
    { type: 'json_parse', field: 'output' },
    { type: 'regex', field: 'metadata.reply', pattern: '^ok$', flags: 'i' },
    { type: 'contains', field: 'output', text: 'refund', caseSensitive: false },
    { type: 'length', field: 'output', min: 2, max: 40 },
    { type: 'length', field: 'input', max: 10 },
    { type: 'latency', maxMs: 1500 },
    { type: 'cost', maxUsd: 0.02 },
    { type: 'output_schema', field: 'output', prompt: { name: 'extractor', label: 'staging' } },
  ] as const)('keeps a $type check', (check) => {
    const evaluator: EvaluatorDefinition = {
      name: 'check',
      type: 'check',
      check,
      score: { name: 'passed', dataType: 'boolean' },
      target: { kind: 'traces', filters: {}, samplingRate: 1, delaySeconds: 30 },
    };
    expect(bodyOf(initialState(evaluator), [])).toEqual(evaluator);
  });

  it('starts a new evaluator as a judge of every new trace', () => {
    expect(bodyOf({ ...initialState(undefined), name: 'n', scoreName: 's' }, [])).toMatchObject({
      type: 'llm_judge',
      score: { name: 's', dataType: 'numeric' },
      target: { filters: {}, samplingRate: 1, delaySeconds: 30 },
    });
  });
});
