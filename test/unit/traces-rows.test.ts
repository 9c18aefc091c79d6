import { describe, expect, it } from 'vitest';
import { toSpanRows } from '../../src/traces/ingest/ingest.js';
import { fromStoredTime, toStoredTime } from '../../src/traces/model/stored-time.js';
import { inApplyOrder } from '../../src/traces/writer/flush.js';
import { nextVersion } from '../../src/traces/model/version.js';
import { type SpanRow } from '../../src/traces/tables/spans-table.js';
import { toStoredSpan } from '../../src/traces/query/tree.js';
import type { Trace } from '../../src/traces/model/schemas.js';

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
      {
        spanId: 'a',
        name: 'n',
        kind: 'tool',
        startTime: '2025-01-01T10:00:00Z',
        endTime: '2025-01-01T10:00:01Z',
        durationMs: 1000,
        status: 'ok',
      },
      {
        spanId: 'b',
        parentSpanId: 'a',
        name: 'n',
        kind: 'llm.chat',
        startTime: '2025-01-01T10:00:00Z',
        endTime: '2025-01-01T10:00:01Z',
        durationMs: 1,
        status: 'error',
        statusMessage: 'x',
        model: 'm',
        inputTokens: 0,
        input: { text: 'hi' },
        attributes: {},
      },
    ],
  };

  it('copies the trace fields onto every span and gives later traces later versions', () => {
    const rows = toSpanRows('w', [trace, { ...trace, name: 'second', environment: 'staging' }]);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({
      workspace_id: 'w',
      trace_id: 't',
      parent_span_id: '',
      trace_name: '',
      environment: '',
      input_tokens: null,
    });
    expect(rows[1]).toMatchObject({ parent_span_id: 'a', status_message: 'x', input_tokens: 0, model: 'm', provider: '' });
    expect(rows[2]).toMatchObject({ trace_name: 'second', environment: 'staging' });
    expect(rows[0]!.version).toBe(rows[1]!.version);
    expect(BigInt(rows[2]!.version) > BigInt(rows[0]!.version)).toBe(true);
  });

  it('reads back exactly the fields that were sent', () => {
    const [a, b] = toSpanRows('w', [trace]).map((row) => toStoredSpan(row.detail));
    expect(a).toEqual({ ...trace.spans[0], startTime: '2025-01-01T10:00:00.000Z', endTime: '2025-01-01T10:00:01.000Z' });
    expect(b).toEqual({ ...trace.spans[1], startTime: '2025-01-01T10:00:00.000Z', endTime: '2025-01-01T10:00:01.000Z' });
  });

  it('writes the detail in the order of the span table, times in UTC', () => {
    const [row] = toSpanRows('w', [{ ...trace, spans: [{ ...trace.spans[1]!, startTime: '2025-01-01T12:00:00.000001+02:00' }] }]);
    expect(Object.keys(JSON.parse(row!.detail))).toEqual([
      'spanId',
      'parentSpanId',
      'name',
      'kind',
      'input',
      'startTime',
      'endTime',
      'durationMs',
      'model',
      'inputTokens',
      'status',
      'statusMessage',
      'attributes',
    ]);
    expect(JSON.parse(row!.detail).startTime).toBe('2025-01-01T10:00:00.000001Z');
  });
});

describe('versions in the order writes are applied', () => {
  const row = (trace_id: string, version: string) => ({ trace_id, span_id: 's', version }) as unknown as SpanRow;
  const versions = (rows: SpanRow[]) => rows.map((r) => `${r.trace_id}@${r.version}`);

  it('keeps versions that already follow the order, and returns the newest as the floor', () => {
    const { rows, floor } = inApplyOrder([[row('a', '100'), row('a', '100')], [row('b', '200')]], 50n);
    expect(versions(rows)).toEqual(['a@100', 'a@100', 'b@200']);
    expect(floor).toBe(200n);
  });

  it('raises a write parsed earlier but applied later just above everything before it, each of its traces alike', () => {
    // The second write's two traces were parsed before the first write (versions 90 and 95).
    const first = [row('a', '100')];
    const second = [row('b', '90'), row('c', '95'), row('b', '90')];
    const { rows, floor } = inApplyOrder([first, second, [row('d', '102')]], 0n);
    expect(versions(rows)).toEqual(['a@100', 'b@101', 'c@101', 'b@101', 'd@102']);
    expect(floor).toBe(102n);
    // The rows given are not changed: the log keeps what was sent.
    expect(second.map((r) => r.version)).toEqual(['90', '95', '90']);
  });

  it('raises above the floor left by earlier flushes (their spans and summaries)', () => {
    expect(versions(inApplyOrder([[row('a', '100')]], 150n).rows)).toEqual(['a@151']);
    // From a lower floor (a new process replaying its log) the same write never gets more.
    expect(versions(inApplyOrder([[row('a', '100')]], 0n).rows)).toEqual(['a@100']);
  });
});
