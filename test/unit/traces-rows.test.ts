import { describe, expect, it } from 'vitest';
import { fromStoredTime, nextVersion, toSpanRows, toStoredTime } from '../../src/traces/rows.js';
import { toStoredSpan, toTraceListItem } from '../../src/traces/tree.js';
import type { Trace } from '../../src/traces/schemas.js';

describe('stored times', () => {
  it('normalizes any offset to UTC and keeps microseconds', () => {
    expect(toStoredTime('2025-01-01T10:00:00Z')).toBe('2025-01-01 10:00:00.000000');
    expect(toStoredTime('2025-01-01T12:00:00.123456+02:00')).toBe('2025-01-01 10:00:00.123456');
    expect(toStoredTime('2025-01-01T10:00:00.1234567Z')).toBe('2025-01-01 10:00:00.123456');
    expect(toStoredTime('2025-01-01T00:30:00.5-01:00')).toBe('2025-01-01 01:30:00.500000');
  });

  it('answers milliseconds unless microseconds are set', () => {
    expect(fromStoredTime('2025-01-01 10:00:00.000000')).toBe('2025-01-01T10:00:00.000Z');
    expect(fromStoredTime('2025-01-01 10:00:00.123456')).toBe('2025-01-01T10:00:00.123456Z');
    expect(fromStoredTime('2025-01-01 10:00:00.120000')).toBe('2025-01-01T10:00:00.120Z');
    expect(fromStoredTime('2025-01-01 10:00:00')).toBe('2025-01-01T10:00:00.000Z');
  });
});

describe('versions', () => {
  it('always increase, also within one nanosecond', () => {
    const seen = Array.from({ length: 1000 }, () => nextVersion());
    for (let i = 1; i < seen.length; i++) expect(seen[i]! > seen[i - 1]!).toBe(true);
    // Nanoseconds since the epoch: close to the wall clock.
    expect(Number(seen[0]! / 1_000_000n) - Date.now()).toBeLessThan(1000);
  });
});

describe('span rows', () => {
  const trace: Trace = {
    traceId: 't',
    source: 'sdk',
    spans: [
      { spanId: 'a', name: 'n', kind: 'tool', startTime: '2025-01-01T10:00:00Z', endTime: '2025-01-01T10:00:01Z', durationMs: 1000, status: 'ok' },
      {
        spanId: 'b', parentSpanId: 'a', name: 'n', kind: 'llm.chat', startTime: '2025-01-01T10:00:00Z', endTime: '2025-01-01T10:00:01Z',
        durationMs: 1, status: 'error', statusMessage: 'x', model: 'm', inputTokens: 0, input: { text: 'hi' }, attributes: {},
      },
    ],
  };

  it('copies the trace fields onto every span and gives later traces later versions', () => {
    const rows = toSpanRows('w', [trace, { ...trace, name: 'second', environment: 'staging' }]);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({ workspace_id: 'w', trace_id: 't', parent_span_id: '', trace_name: '', environment: '', input: '', input_tokens: null });
    expect(rows[1]).toMatchObject({ parent_span_id: 'a', input: '{"text":"hi"}', attributes: '{}', input_tokens: 0, model: 'm' });
    expect(rows[2]).toMatchObject({ trace_name: 'second', environment: 'staging' });
    expect(rows[0]!.version).toBe(rows[1]!.version);
    expect(BigInt(rows[2]!.version) > BigInt(rows[0]!.version)).toBe(true);
  });

  it('reads back exactly the fields that were sent', () => {
    const [a, b] = toSpanRows('w', [trace]).map(toStoredSpan);
    expect(a).toEqual({ ...trace.spans[0], startTime: '2025-01-01T10:00:00.000Z', endTime: '2025-01-01T10:00:01.000Z' });
    expect(b).toEqual({ ...trace.spans[1], startTime: '2025-01-01T10:00:00.000Z', endTime: '2025-01-01T10:00:01.000Z' });
  });

  it('turns a running summary row into a list item with nulls and no usage', () => {
    const item = toTraceListItem({
      trace_id: 't', name: '', session_id: '', source: 'sdk', environment: '', status: 'running', trace_kind: '',
      start_time: '2025-01-01 10:00:00.000000', end_time: null, duration_ms: null, model: '', provider: '',
      input_tokens: null, output_tokens: null, total_tokens: null, cost_usd: null, span_count: 3, error_count: 0,
    });
    expect(item).toEqual({
      traceId: 't', name: null, sessionId: null, source: 'sdk', environment: null, status: 'running', traceKind: null,
      startTime: '2025-01-01T10:00:00.000Z', endTime: null, durationMs: null, spanCount: 3, errorCount: 0,
    });
  });
});
