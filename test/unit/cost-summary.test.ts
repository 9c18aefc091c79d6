import { describe, expect, it } from 'vitest';
import { summarizeTrace, type SpanFacts } from '../../src/traces/summaries/summary.js';

/** The counting rule of trace summaries for cost: wrappers counted once, cost split by source, unpriced spans. */
function span(span_id: string, parent_span_id: string, kind: string, overrides: Partial<SpanFacts> = {}): SpanFacts {
  return {
    trace_id: 't',
    span_id,
    version: '1',
    trace_name: '',
    session_id: '',
    environment: '',
    service: '',
    user_id: '',
    tags: [],
    source: 'sdk',
    parent_span_id,
    status: 'ok',
    kind,
    start_time: '2026-01-01 00:00:00.000000',
    end_time: '2026-01-01 00:00:01.000000',
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
const usage = (input: number, cost: number, cost_source = 'computed') => ({
  model: 'm',
  input_tokens: input,
  output_tokens: 0,
  cost_usd: cost,
  cost_source,
});

describe('trace cost by the counting rule', () => {
  it('counts an agent span repeating its children once (not at all)', () => {
    const row = summarizeTrace(
      'ws',
      [span('a', '', 'agent', usage(30, 3)), span('c1', 'a', 'llm.chat', usage(10, 1)), span('c2', 'a', 'llm.chat', usage(20, 2))],
      undefined,
      '2',
    );
    expect(row).toMatchObject({ input_tokens: 30, cost_usd: 3, cost_computed: 3, cost_provided: 0 });
  });

  it('counts the inner one of nested embeddings spans, and the steps under a Vercel AI SDK wrapper', () => {
    const nested = summarizeTrace(
      'ws',
      [span('outer', '', 'llm.embedding', usage(7, 0.7)), span('inner', 'outer', 'llm.embedding', usage(7, 0.7))],
      undefined,
      '2',
    );
    expect(nested).toMatchObject({ input_tokens: 7, cost_usd: 0.7 });
    const vercel = summarizeTrace(
      'ws',
      [
        span('gen', '', 'llm.chat', usage(30, 3)),
        span('do1', 'gen', 'llm.chat', usage(10, 1)),
        span('tool', 'gen', 'tool'),
        span('do2', 'gen', 'llm.chat', usage(20, 2)),
      ],
      undefined,
      '2',
    );
    expect(vercel).toMatchObject({ input_tokens: 30, cost_usd: 3 });
    expect(vercel.by_model.find((g) => g.key === 'm')).toMatchObject({ spans: 3, input_tokens: 30, cost_usd: 3 });
    expect(vercel.by_kind.find((g) => g.key === 'llm.chat')).toMatchObject({ spans: 3, cost_usd: 3 });
  });

  it('counts a generation span whose child generation is of another kind (a chat that embeds)', () => {
    const row = summarizeTrace(
      'ws',
      [span('chat', '', 'llm.chat', usage(100, 10)), span('embed', 'chat', 'llm.embedding', usage(5, 0.5))],
      undefined,
      '2',
    );
    expect(row).toMatchObject({ input_tokens: 105, cost_usd: 10.5 });
  });

  it('splits cost by source and counts unpriced spans among the counted ones only', () => {
    const row = summarizeTrace(
      'ws',
      [
        span('root', '', 'agent'),
        span('paid', 'root', 'llm.chat', usage(10, 0.25, 'provided')),
        span('legacy', 'root', 'llm.chat', usage(10, 0.5, '')),
        span('priced', 'root', 'llm.chat', usage(10, 1)),
        span('wrapper', 'root', 'llm.chat', { model: 'x', input_tokens: 5, cost_source: 'none' }),
        span('unpriced', 'wrapper', 'llm.chat', { model: 'x', input_tokens: 5, cost_source: 'none' }),
      ],
      undefined,
      '2',
    );
    expect(row).toMatchObject({ cost_usd: 1.75, cost_provided: 0.75, cost_computed: 1, unpriced_spans: 1 });
  });
});
