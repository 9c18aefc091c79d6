import { describe, expect, it } from 'vitest';
import { BoundedAnswer, compactJson, textPage } from '../../src/mcp/bounded-answer.js';
import { queryString } from '../../src/mcp/loupe-api.js';
import { outlineOf } from '../../src/mcp/tools.js';

const node = (spanId: string, parentSpanId?: string) => ({
  spanId,
  ...(parentSpanId ? { parentSpanId } : {}),
  name: spanId,
  kind: 'tool',
  status: 'ok',
  startTime: '2026-01-01T00:00:00Z',
});

describe('the span outline', () => {
  it('is depth-first with children in their given order; a span whose parent is absent is a root', () => {
    const outline = outlineOf([node('root'), node('a', 'root'), node('b', 'root'), node('a1', 'a'), node('orphan', 'gone')]);
    expect(outline.map(({ depth, span }) => `${depth}:${span.spanId}`)).toEqual(['0:root', '1:a', '2:a1', '1:b', '0:orphan']);
  });

  it('lists spans on a parent cycle once each, at the top level, and survives a deep chain', () => {
    const cycle = outlineOf([node('x', 'y'), node('y', 'x'), node('self', 'self')]);
    expect(cycle.map(({ depth, span }) => `${depth}:${span.spanId}`)).toEqual(['0:self', '0:x', '0:y']);
    const chain = Array.from({ length: 20_000 }, (_, i) => node(`s${i}`, i === 0 ? undefined : `s${i - 1}`));
    const deep = outlineOf(chain);
    expect(deep).toHaveLength(20_000);
    expect(deep[19_999]).toMatchObject({ depth: 19_999, span: { spanId: 's19999' } });
  });
});

describe('a bounded answer', () => {
  it('stops at the limit, refuses every later line, and keeps the hint within the limit', () => {
    const out = new BoundedAnswer(3_000);
    let added = 0;
    while (out.add('x'.repeat(99))) added += 1;
    expect(added).toBe(20); // 2,000 characters of lines: the last 1,000 are the hint's room
    expect(out.add('short')).toBe(false);
    const text = out.text(`read on ${'h'.repeat(5_000)}`);
    expect(text.length).toBeLessThanOrEqual(3_000);
    expect(text.endsWith('…')).toBe(true);
  });

  it('leaves absent fields out of compact JSON, pages texts and repeats array query keys', () => {
    expect(compactJson({ a: 1, b: null, c: undefined, d: [], e: ['x'], f: 0, g: '' })).toBe('{"a":1,"e":["x"],"f":0,"g":""}');
    expect(textPage('abcdefg', 2, 3)).toEqual({ part: 'cde', next: 5 });
    expect(textPage('abcdefg', 5, 3)).toEqual({ part: 'fg', next: null });
    expect(queryString({ tag: ['a b', 'c'], limit: 5, cursor: undefined })).toBe('?tag=a+b&tag=c&limit=5');
    expect(queryString({})).toBe('');
  });
});
