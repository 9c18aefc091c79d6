import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

/** POSTs traces for a workspace and checks that every one was accepted. */
export async function sendTraces(app: FastifyInstance, headers: Record<string, string>, traces: unknown[]) {
  const res = await app.inject({ method: 'POST', url: '/api/traces', headers, payload: { traces } });
  expect(res.statusCode).toBe(200);
  expect(res.json().data.rejected).toBe(0);
}

/** Each query string answers 400 VALIDATION_ERROR with the given path among its issues. */
export async function expectBadQueries(app: FastifyInstance, url: string, headers: Record<string, string>, cases: Array<[string, string]>) {
  for (const [query, path] of cases) {
    const res = await app.inject({ method: 'GET', url: `${url}?${query}`, headers });
    expect(res.statusCode, query).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
    expect(
      res.json().error.details.issues.map((i: { path: string }) => i.path),
      query,
    ).toContain(path);
  }
}

/**
 * A prepared data set with known answers for the stats and analytics tests (the expected
 * figures are written out by hand in the tests, from the values below).
 *
 * T1 sdk, session s1, 2026-03-01T10:00Z, 1000 ms, completed: agent root repeating its child's
 *    usage (must not count), llm.chat gpt-4o/openai 60+40=100 tokens $0.5 200 ms, tool 50 ms.
 * T2 otel, session s1, 2026-03-01T11:30Z, 3000 ms, error: chain root (error), llm.chat
 *    claude/anthropic 30+20=50 tokens $0.25 400 ms, tool (error) 100 ms.
 * T3 sdk, no session, 2026-03-02T09:00Z, 500 ms, completed: one agent span gpt-4o/openai with
 *    10+5=15 tokens $0.1 (counts: the trace has no generation span).
 * T4 sdk, 2026-03-03T00:00Z, running: llm.completion gpt-4o-mini/openai 5+5=10 tokens $0.01 80 ms.
 * T5 sdk, 2026-03-01T12:00Z: $100, deleted after sending.
 */

interface SpanInput {
  spanId: string;
  parentSpanId?: string;
  kind: string;
  start: string;
  durationMs: number;
  status?: 'ok' | 'error' | 'unset';
  model?: string;
  provider?: string;
  usage?: [number, number, number]; // cost is given on its own
  costUsd?: number;
}

function span(input: SpanInput) {
  const start = Date.parse(input.start);
  return {
    spanId: input.spanId,
    ...(input.parentSpanId ? { parentSpanId: input.parentSpanId } : {}),
    name: `${input.kind} ${input.spanId}`,
    kind: input.kind,
    startTime: new Date(start).toISOString(),
    endTime: new Date(start + input.durationMs).toISOString(),
    durationMs: input.durationMs,
    status: input.status ?? 'ok',
    ...(input.model ? { model: input.model } : {}),
    ...(input.provider ? { provider: input.provider } : {}),
    ...(input.usage ? { inputTokens: input.usage[0], outputTokens: input.usage[1], totalTokens: input.usage[2] } : {}),
    ...(input.costUsd !== undefined ? { costUsd: input.costUsd } : {}),
  };
}

export function fixtureTraces(prefix = '') {
  const t1 = {
    traceId: `${prefix}t1`,
    name: 'chat turn',
    sessionId: 's1',
    source: 'sdk',
    environment: 'production',
    spans: [
      span({ spanId: 'a', kind: 'agent', start: '2026-03-01T10:00:00Z', durationMs: 1000, usage: [60, 40, 100], costUsd: 0.5 }),
      span({
        spanId: 'b',
        parentSpanId: 'a',
        kind: 'llm.chat',
        start: '2026-03-01T10:00:00.100Z',
        durationMs: 200,
        model: 'gpt-4o',
        provider: 'openai',
        usage: [60, 40, 100],
        costUsd: 0.5,
      }),
      span({ spanId: 'c', parentSpanId: 'a', kind: 'tool', start: '2026-03-01T10:00:00.400Z', durationMs: 50 }),
    ],
  };
  const t2 = {
    traceId: `${prefix}t2`,
    sessionId: 's1',
    source: 'otel',
    spans: [
      span({ spanId: 'a', kind: 'chain', start: '2026-03-01T11:30:00Z', durationMs: 3000, status: 'error' }),
      span({
        spanId: 'b',
        parentSpanId: 'a',
        kind: 'llm.chat',
        start: '2026-03-01T11:30:00.500Z',
        durationMs: 400,
        model: 'claude',
        provider: 'anthropic',
        usage: [30, 20, 50],
        costUsd: 0.25,
      }),
      span({ spanId: 'c', parentSpanId: 'a', kind: 'tool', start: '2026-03-01T11:30:01Z', durationMs: 100, status: 'error' }),
    ],
  };
  const t3 = {
    traceId: `${prefix}t3`,
    source: 'sdk',
    spans: [
      span({
        spanId: 'a',
        kind: 'agent',
        start: '2026-03-02T09:00:00Z',
        durationMs: 500,
        model: 'gpt-4o',
        provider: 'openai',
        usage: [10, 5, 15],
        costUsd: 0.1,
      }),
    ],
  };
  const t4 = {
    traceId: `${prefix}t4`,
    source: 'sdk',
    spans: [
      span({
        spanId: 'x',
        parentSpanId: 'not-yet-sent',
        kind: 'llm.completion',
        start: '2026-03-03T00:00:00Z',
        durationMs: 80,
        model: 'gpt-4o-mini',
        provider: 'openai',
        usage: [5, 5, 10],
        costUsd: 0.01,
      }),
    ],
  };
  const t5 = {
    traceId: `${prefix}t5`,
    sessionId: 's1',
    source: 'sdk',
    spans: [
      span({
        spanId: 'a',
        kind: 'llm.chat',
        start: '2026-03-01T12:00:00Z',
        durationMs: 9000,
        model: 'gpt-4o',
        provider: 'openai',
        usage: [1e6, 1e6, 2e6],
        costUsd: 100,
      }),
    ],
  };
  return { t1, t2, t3, t4, t5 };
}

/** Linear interpolation between closest ranks: the definition `quantilesExactInclusive` uses. */
export function exactPercentile(values: number[], level: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = level * (sorted.length - 1);
  const low = Math.floor(position);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}
