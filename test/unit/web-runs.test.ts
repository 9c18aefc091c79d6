import { describe, expect, it } from 'vitest';
import { jsonPreview, runsDisagree, scoreNamesOf } from '../../web/src/lib/runs.js';
import { comparePath, runPath, spanPath } from '../../web/src/lib/paths.js';
import { formatPValue, formatSigned } from '../../web/src/lib/format.js';

const item = (scores: Record<string, number>, failed = false) => ({ failed, scores });

describe('runs side by side in the console', () => {
  it('says the runs disagree on an item when a score, failing or presence differs, never on equal scores', () => {
    expect(runsDisagree([item({ exact: 1, distance: 0 }), item({ exact: 1, distance: 0 })])).toBe(false);
    expect(runsDisagree([item({ exact: 1 }), item({ exact: 0 })])).toBe(true);
    // A score in one run only, a failure in one run only, an item one run lacks.
    expect(runsDisagree([item({ exact: 1 }), item({ exact: 1, distance: 2 })])).toBe(true);
    expect(runsDisagree([item({}), item({}, true)])).toBe(true);
    expect(runsDisagree([item({ exact: 1 }), null])).toBe(true);
    // Means of a trace's scores: equal up to rounding are equal.
    expect(runsDisagree([item({ mean: 0.1 + 0.2 }), item({ mean: 0.3 })])).toBe(false);
    // Three runs: any run against the first.
    expect(runsDisagree([item({ a: 1 }), item({ a: 1 }), item({ a: 2 })])).toBe(true);
    expect(scoreNamesOf([item({ b: 1 }), null, item({ a: 1, b: 2 })])).toEqual(['a', 'b']);
  });

  it('previews JSON on one line, cut with an ellipsis', () => {
    expect(jsonPreview({ question: 'Is it covered?' })).toBe('{"question":"Is it covered?"}');
    expect(jsonPreview('plain text')).toBe('plain text');
    expect(jsonPreview(undefined)).toBe('—');
    const long = jsonPreview({ text: 'x'.repeat(500) }, 20);
    expect(long).toHaveLength(20);
    expect(long.endsWith('…')).toBe(true);
  });

  it('builds the run URL the SDKs print, the comparison and a span link', () => {
    const id = '4f0c2a0e-1d2b-4c3d-8e9f-0a1b2c3d4e5f';
    const run = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
    expect(runPath(id, run)).toBe(`/datasets/${id}/runs/${run}`);
    expect(comparePath(id, [run, id])).toBe(`/datasets/${id}/compare?runs=${run},${id}`);
    expect(spanPath('t 1', 's/1')).toBe('/traces/t%201?span=s%2F1');
    expect(spanPath('..', null)).toBe('/traces/~..');
    expect(formatPValue(0.00001)).toBe('< 0.0001');
    expect(formatPValue(0.25)).toBe('0.25');
    expect(formatSigned(0.5)).toBe('+0.5');
    expect(formatSigned(-2)).toBe('-2');
  });
});
