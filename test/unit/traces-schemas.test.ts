import { describe, expect, it } from 'vitest';
import { isBefore, limits, listTracesQuery, spanKinds, traceSchema } from '../../src/traces/model/schemas.js';

const span = (overrides: Record<string, unknown> = {}) => ({
  spanId: 's1',
  name: 'step',
  kind: 'tool',
  startTime: '2025-01-01T10:00:00.000Z',
  endTime: '2025-01-01T10:00:01.000Z',
  durationMs: 1000,
  status: 'ok',
  ...overrides,
});
const trace = (overrides: Record<string, unknown> = {}) => ({ traceId: 't1', source: 'sdk', spans: [span()], ...overrides });
const issues = (value: unknown) => {
  const result = traceSchema.safeParse(value);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('trace schema', () => {
  it('has the 15 span kinds of the specification', () => {
    expect(spanKinds).toHaveLength(15);
    for (const kind of spanKinds) expect(issues(trace({ spans: [span({ kind })] }))).toEqual([]);
  });

  it('accepts every optional field', () => {
    const full = span({
      parentSpanId: 'p',
      input: {
        messages: [{ role: 'tool', content: 'x', name: 'n', toolCallId: 'c' }],
        toolCalls: [{ id: 'c', name: 'f', arguments: {}, result: 1 }],
        documents: [{ content: 'd', metadata: {}, score: 1 }],
        text: 't',
        raw: null,
      },
      output: { raw: [1] },
      model: 'm',
      provider: 'p',
      inputTokens: 0,
      outputTokens: 1,
      totalTokens: 1,
      costUsd: 0,
      statusMessage: '',
      attributes: { a: 1 },
      events: [{ name: 'e', timestamp: '2025-01-01T10:00:00+01:00' }],
      metadata: {},
    });
    expect(issues(trace({ name: 'n', sessionId: 'session one', environment: 'production', spans: [full] }))).toEqual([]);
  });

  it('rejects bad ids, labels and lengths', () => {
    expect(issues(trace({ traceId: '' }))).toContainEqual(expect.stringMatching(/^traceId:/));
    expect(issues(trace({ traceId: 'has space' }))).toEqual([expect.stringMatching(/^traceId:/)]);
    expect(issues(trace({ traceId: 'x'.repeat(limits.idLength + 1) }))).toEqual([expect.stringMatching(/^traceId:/)]);
    expect(issues(trace({ source: 'a b' }))).toEqual([expect.stringMatching(/^source:/)]);
    expect(issues(trace({ name: 'x'.repeat(limits.nameLength + 1) }))).toEqual([expect.stringMatching(/^name:/)]);
    expect(issues(trace({ sessionId: 'a\nb' }))).toEqual([expect.stringMatching(/^sessionId:/)]);
    expect(issues(trace({ spans: [] }))).toEqual([expect.stringMatching(/^spans:/)]);
  });

  it('rejects negative or non-finite numbers and bad enums', () => {
    expect(issues(trace({ spans: [span({ durationMs: -1 })] }))).toEqual([expect.stringMatching(/^spans.0.durationMs:/)]);
    expect(issues(trace({ spans: [span({ inputTokens: -5 })] }))).toEqual([expect.stringMatching(/^spans.0.inputTokens:/)]);
    expect(issues(trace({ spans: [span({ costUsd: Number.NaN })] }))).toEqual([expect.stringMatching(/^spans.0.costUsd:/)]);
    expect(issues(trace({ spans: [span({ status: 'done' })] }))).toEqual([expect.stringMatching(/^spans.0.status:/)]);
    expect(issues(trace({ spans: [span({ input: { messages: [{ role: 'bot', content: 'x' }] } })] }))).toEqual([
      expect.stringMatching(/^spans.0.input.messages.0.role:/),
    ]);
  });

  it('rejects times without a zone, out of range, or an end before the start', () => {
    expect(issues(trace({ spans: [span({ startTime: '2025-01-01T10:00:00' })] }))).toEqual([expect.stringMatching(/^spans.0.startTime:/)]);
    expect(issues(trace({ spans: [span({ startTime: '1969-12-31T23:59:59Z' })] }))).toEqual([expect.stringMatching(/^spans.0.startTime:/)]);
    expect(issues(trace({ spans: [span({ endTime: '2025-01-01T09:59:59.999Z' })] }))).toEqual([
      'spans.0.endTime: must not be before startTime',
    ]);
    // Same millisecond, earlier microsecond; and an offset that puts the end after the start.
    expect(issues(trace({ spans: [span({ startTime: '2025-01-01T10:00:00.000500Z', endTime: '2025-01-01T10:00:00.000400Z' })] }))).toEqual([
      'spans.0.endTime: must not be before startTime',
    ]);
    expect(issues(trace({ spans: [span({ endTime: '2025-01-01T11:00:01+01:00' })] }))).toEqual([]);
  });

  it('rejects a span that is its own parent and duplicate span ids', () => {
    expect(issues(trace({ spans: [span({ parentSpanId: 's1' })] }))).toEqual(['spans.0.parentSpanId: must not name the span itself']);
    expect(issues(trace({ spans: [span(), span({ spanId: 's2' }), span()] }))).toEqual([
      'spans.2.spanId: duplicates the spanId of spans.0',
    ]);
  });

  it('compares times to the microsecond', () => {
    expect(isBefore('2025-01-01T10:00:00.000001Z', '2025-01-01T10:00:00.000002Z')).toBe(true);
    expect(isBefore('2025-01-01T10:00:00.000002Z', '2025-01-01T10:00:00.000002Z')).toBe(false);
    expect(isBefore('2025-01-01T11:00:00+01:00', '2025-01-01T10:00:00.001Z')).toBe(true);
  });
});

describe('list query', () => {
  it('defaults and bounds limit and offset', () => {
    expect(listTracesQuery.parse({})).toEqual({ limit: 20, offset: 0 });
    expect(listTracesQuery.parse({ limit: '100', offset: '5' })).toMatchObject({ limit: 100, offset: 5 });
    for (const bad of [{ limit: '0' }, { limit: '101' }, { offset: '-1' }, { limit: '1.5' }, { status: 'ok' }, { unknown: 'x' }]) {
      expect(listTracesQuery.safeParse(bad).success).toBe(false);
    }
  });
});
