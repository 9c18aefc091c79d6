import { describe, expect, it } from 'vitest';
import { summarizeTrace, summarizeTraces, type SpanFacts } from '../../src/traces/summaries/summary.js';

let n = 0;
function span(overrides: Partial<SpanFacts> = {}): SpanFacts {
  n += 1;
  return {
    trace_id: 't1',
    span_id: `s${String(n).padStart(3, '0')}`,
    version: '1000',
    trace_name: '',
    session_id: '',
    environment: '',
    service: '',
    user_id: '',
    tags: [],
    source: 'sdk',
    parent_span_id: 'root',
    status: 'ok',
    kind: 'tool',
    start_time: '2025-01-01 10:00:00.000000',
    end_time: '2025-01-01 10:00:01.000000',
    duration_ms: 1000,
    model: '',
    provider: '',
    input_tokens: null,
    output_tokens: null,
    total_tokens: null,
    cost_usd: null,
    cost_source: '',
    ttft_ms: null,
    ...overrides,
  };
}

describe('summarizeTrace', () => {
  it('is running without a root and takes the earliest root (then lowest id) once one arrived', () => {
    const child = span({ start_time: '2025-01-01 09:59:59.000000' });
    expect(summarizeTrace('ws', [child], undefined, '5')).toMatchObject({
      status: 'running',
      trace_kind: '',
      end_time: null,
      duration_ms: null,
    });
    const late = span({ span_id: 'a', parent_span_id: '', kind: 'chain', start_time: '2025-01-01 10:00:05.000000', status: 'error' });
    const early = span({ span_id: 'z', parent_span_id: '', kind: 'agent', start_time: '2025-01-01 10:00:00.000000', duration_ms: 42 });
    const tie = span({ span_id: 'b', parent_span_id: '', kind: 'graph', start_time: '2025-01-01 10:00:00.000000', status: 'error' });
    const row = summarizeTrace('ws', [child, late, early, tie], undefined, '5');
    expect(row).toMatchObject({
      status: 'error',
      trace_kind: 'graph',
      start_time: '2025-01-01 09:59:59.000000',
      span_count: 4,
      error_count: 2,
    });
  });

  it('sums usage over generation spans only when the trace has any, null when none was sent', () => {
    const agent = span({ kind: 'agent', input_tokens: 100, output_tokens: 10, total_tokens: 110, cost_usd: 1 });
    const chat = span({ kind: 'llm.chat', model: 'gpt-4o', input_tokens: 60, output_tokens: 6, cost_usd: 0.25 });
    const embed = span({ kind: 'llm.embedding', model: 'emb', input_tokens: 40, output_tokens: null, cost_usd: 0.5 });
    const row = summarizeTrace('ws', [agent, chat, embed], undefined, '5');
    expect(row).toMatchObject({ input_tokens: 100, output_tokens: 6, total_tokens: null, cost_usd: 0.75 });
    expect(summarizeTrace('ws', [agent], undefined, '5')).toMatchObject({ input_tokens: 100, total_tokens: 110, cost_usd: 1 });
  });

  it('names the model of the generation span with a model, then most tokens, then the highest id', () => {
    const unnamed = span({ kind: 'llm.chat', total_tokens: 10_000 });
    const small = span({ kind: 'llm.chat', model: 'small', provider: 'p1', input_tokens: 5, output_tokens: 5 });
    const big = span({ kind: 'llm.chat', model: 'big', provider: 'p2', total_tokens: 11 });
    const tool = span({ model: 'not-a-generation', total_tokens: 1e6 });
    expect(summarizeTrace('ws', [unnamed, small, big, tool], undefined, '5')).toMatchObject({ model: 'big', provider: 'p2' });
    const twin = span({ span_id: 'zzz', kind: 'llm.chat', model: 'twin', total_tokens: 11 });
    expect(summarizeTrace('ws', [big, twin], undefined, '5').model).toBe('twin');
  });

  it('keeps trace fields from the latest payload that sent them, and from the previous summary when re-sent without', () => {
    const older = span({ version: '100', trace_name: 'old', user_id: 'u1', tags: ['a'] });
    const newer = span({ version: '200', trace_name: 'new', tags: [] });
    expect(summarizeTrace('ws', [older, newer], undefined, '5')).toMatchObject({ name: 'new', user_id: 'u1', tags: ['a'] });
    const previous = {
      trace_id: 't1',
      version: '300',
      name: 'kept',
      session_id: 's',
      environment: '',
      service: 'svc',
      user_id: '',
      tags: ['p'],
    };
    expect(summarizeTrace('ws', [older, newer], previous, '5')).toMatchObject({
      name: 'kept',
      session_id: 's',
      service: 'svc',
      user_id: 'u1',
      tags: ['p'],
    });
    const newest = span({ version: '9999', trace_name: 'latest', tags: ['n'] });
    expect(summarizeTrace('ws', [older, newest], previous, '5')).toMatchObject({ name: 'latest', tags: ['n'], session_id: 's' });
    // Versions are 64-bit: compared as numbers, not as text.
    const wide = span({ version: '10000', trace_name: 'wide' });
    expect(summarizeTrace('ws', [span({ version: '9999', trace_name: 'narrow' }), wide], undefined, '5').name).toBe('wide');
  });

  it('groups spans per model, provider and kind in key order with the counted usage and every duration', () => {
    const rows = [
      span({ kind: 'llm.chat', model: 'm2', provider: 'p', input_tokens: 3, cost_usd: 0.5, duration_ms: 7, status: 'error' }),
      span({ kind: 'llm.chat', model: 'm1', provider: 'p', input_tokens: 2, duration_ms: 5 }),
      span({ kind: 'agent', input_tokens: 100, duration_ms: 9 }),
    ];
    const row = summarizeTrace('ws', rows, undefined, '5');
    expect(row.by_model).toEqual([
      { key: '', spans: 1, errors: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0, durations: [9] },
      { key: 'm1', spans: 1, errors: 0, input_tokens: 2, output_tokens: 0, total_tokens: 0, cost_usd: 0, durations: [5] },
      { key: 'm2', spans: 1, errors: 1, input_tokens: 3, output_tokens: 0, total_tokens: 0, cost_usd: 0.5, durations: [7] },
    ]);
    expect(row.by_kind.map((g) => [g.key, g.input_tokens])).toEqual([
      ['agent', 0],
      ['llm.chat', 5],
    ]);
  });

  it('writes the list item as the list returns it: empty as null, unsent usage left out', () => {
    const root = span({ parent_span_id: '', kind: 'agent', end_time: '2025-01-01 10:00:01.000250', trace_name: 'n', tags: ['x'] });
    const item = JSON.parse(summarizeTrace('ws', [root], undefined, '5').item);
    expect(item).toEqual({
      traceId: 't1',
      name: 'n',
      sessionId: null,
      source: 'sdk',
      environment: null,
      service: null,
      userId: null,
      tags: ['x'],
      status: 'completed',
      traceKind: 'agent',
      startTime: '2025-01-01T10:00:00.000Z',
      endTime: '2025-01-01T10:00:01.000250Z',
      durationMs: 1000,
      spanCount: 1,
      errorCount: 0,
    });
  });

  it('summarizes each trace of a batch with its own previous row', () => {
    const rows = summarizeTraces(
      'ws',
      [span({ trace_id: 'a' }), span({ trace_id: 'b' }), span({ trace_id: 'a' })],
      [{ trace_id: 'b', version: '1', name: 'B', session_id: '', environment: '', service: '', user_id: '', tags: [] }],
      '5',
    );
    expect(rows.map((r) => [r.trace_id, r.span_count, r.name])).toEqual([
      ['a', 2, ''],
      ['b', 1, 'B'],
    ]);
  });
});

describe('summarizeTrace ttfts', () => {
  it('lists the time to first token of each span that has one, with its model, provider and kind', () => {
    const spans = [
      span({ kind: 'llm.chat', model: 'gpt-4o', provider: 'openai', ttft_ms: 150 }),
      span({ kind: 'llm.chat', model: 'gpt-4o', provider: 'openai' }),
      span({ kind: 'llm.chat', model: 'claude', provider: 'anthropic', ttft_ms: 90.5 }),
    ];
    expect(summarizeTrace('ws', spans, undefined, '5').ttfts).toEqual([
      { model: 'gpt-4o', provider: 'openai', kind: 'llm.chat', ttft_ms: 150 },
      { model: 'claude', provider: 'anthropic', kind: 'llm.chat', ttft_ms: 90.5 },
    ]);
  });
});
