import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Loupe, type LoupeError, type ScorePayload } from '../../packages/sdk/src/index.js';
import { MAX_REQUEST_BYTES, MAX_REQUEST_SCORES } from '../../packages/sdk/src/transport.js';
import { acceptAll, fakeFetch, json, type RecordedCall, type Responder } from './sdk-fake-service.js';

/** Answers POST /api/scores as the service does (every score accepted), traces as acceptAll. */
const acceptScores: Responder = (call, index) => {
  const scores = scoresOf(call);
  if (!call.url.endsWith('/api/scores')) return acceptAll(call, index);
  return json(200, { data: { accepted: scores.length, rejected: 0, ids: scores.map((s) => s.id), errors: [] }, meta: {} });
};

const scoresOf = (call: RecordedCall): ScorePayload[] => (call.body as unknown as { scores?: ScorePayload[] })?.scores ?? [];

function client(responder: Responder = acceptScores, options: Partial<ConstructorParameters<typeof Loupe>[0]> = {}) {
  const service = fakeFetch(responder);
  const errors: LoupeError[] = [];
  const loupe = new Loupe({
    apiKey: 'lpk_test',
    baseUrl: 'http://loupe.test',
    fetch: service.fetch,
    onError: (e) => errors.push(e),
    env: {},
    ...options,
  });
  const scoreCalls = () => service.calls.filter((c) => c.url.endsWith('/api/scores'));
  return { loupe, errors, scoreCalls, ...service };
}

describe('SDK scores', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('span.score targets its trace and span; loupe.score sends any target, source sdk, on the flush', async () => {
    const { loupe, scoreCalls, calls } = client(acceptScores, { environment: 'staging' });
    const span = loupe.startSpan('answer', { kind: 'llm.chat' });
    const spanScoreId = span.score('helpfulness', 0.8, { comment: 'good', metadata: { judge: 'gpt' } });
    span.end();
    const traceScoreId = loupe.score({ traceId: span.traceId, name: 'correct', value: true, id: 'fixed-1' });
    loupe.score({
      sessionId: 'sess-9',
      name: 'tone',
      value: 'friendly',
      dataType: 'categorical',
      timestamp: new Date('2026-01-02T03:04:05Z'),
    });
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(0); // batched, not one request a score
    await loupe.flush();
    expect(calls.map((c) => c.url)).toEqual(['http://loupe.test/api/traces', 'http://loupe.test/api/scores']);
    const sent = scoresOf(scoreCalls()[0]!);
    expect(traceScoreId).toBe('fixed-1');
    expect(spanScoreId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent).toEqual([
      expect.objectContaining({
        id: spanScoreId,
        name: 'helpfulness',
        value: 0.8,
        comment: 'good',
        metadata: { judge: 'gpt' },
        source: 'sdk',
        environment: 'staging',
        traceId: span.traceId,
        spanId: span.spanId,
      }),
      expect.objectContaining({ id: 'fixed-1', name: 'correct', value: true, traceId: span.traceId, source: 'sdk' }),
      expect.objectContaining({
        name: 'tone',
        value: 'friendly',
        dataType: 'categorical',
        sessionId: 'sess-9',
        timestamp: '2026-01-02T03:04:05.000Z',
      }),
    ]);
    expect(sent[1]).not.toHaveProperty('spanId');
    expect(loupe.stats().scores).toEqual({ queued: 0, sent: 3, rejected: 0, dropped: 0 });
    await loupe.shutdown();
  });

  it('flushes when batchSize scores have accumulated, and every flush interval', async () => {
    const { loupe, scoreCalls } = client(acceptScores, { batchSize: 3 });
    loupe.score({ traceId: 't1', name: 'a', value: 1 });
    loupe.score({ traceId: 't1', name: 'b', value: 2 });
    await vi.advanceTimersByTimeAsync(0);
    expect(scoreCalls()).toHaveLength(0);
    loupe.score({ traceId: 't1', name: 'c', value: 3 });
    await vi.advanceTimersByTimeAsync(0);
    expect(scoreCalls()).toHaveLength(1);
    expect(scoresOf(scoreCalls()[0]!).map((s) => s.name)).toEqual(['a', 'b', 'c']);
    loupe.score({ traceId: 't1', name: 'd', value: 4 });
    await vi.advanceTimersByTimeAsync(5000);
    expect(scoreCalls()).toHaveLength(2);
    await loupe.shutdown();
  });

  it('retries with backoff and the same ids (a re-send corrects, never duplicates), then gives up and reports', async () => {
    const { loupe, scoreCalls, errors } = client(() => json(503, { error: { code: 'UNAVAILABLE', message: 'busy' } }));
    const start = Date.now();
    loupe.score({ traceId: 't1', name: 'a', value: 1 });
    loupe.score({ traceId: 't1', name: 'b', value: 0 });
    void loupe.flush();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(scoreCalls().map((c) => c.at - start)).toEqual([0, 1000, 3000, 7000]);
    const ids = scoreCalls().map((c) => scoresOf(c).map((s) => s.id));
    expect(new Set(ids.map((i) => i.join())).size).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ kind: 'dropped', details: { status: 503, scoreCount: 2 } });
    expect(loupe.stats().scores).toMatchObject({ dropped: 2, sent: 0 });
    await loupe.shutdown();
  });

  it('reports scores the service refused; the others count as sent', async () => {
    const { loupe, errors } = client((call, i) =>
      call.url.endsWith('/api/scores')
        ? json(200, {
            data: {
              accepted: 1,
              rejected: 1,
              ids: ['x', null],
              errors: [{ index: 1, id: null, path: 'scores.1.value', message: 'must be at most 5 (config)' }],
            },
            meta: {},
          })
        : acceptAll(call, i),
    );
    loupe.score({ traceId: 't1', name: 'stars', value: 4 });
    loupe.score({ traceId: 't1', name: 'stars', value: 9 });
    await loupe.flush();
    expect(loupe.stats().scores).toMatchObject({ sent: 1, rejected: 1 });
    expect(errors).toHaveLength(1);
    expect(errors[0]!.kind).toBe('rejected');
    expect(errors[0]!.message).toContain('scores.1.value: must be at most 5 (config)');
    await loupe.shutdown();
  });

  it('a backlog goes out in requests of up to MAX_REQUEST_SCORES, within MAX_REQUEST_BYTES, none lost', async () => {
    vi.useRealTimers();
    // The first request hangs while 2,490 more scores are given: a backlog, as under an evaluation loop.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { loupe, scoreCalls } = client(async (call, i) => {
      if (i === 0) await held;
      return acceptScores(call, i);
    });
    for (let i = 0; i < 2500; i++) loupe.score({ traceId: `t${i}`, name: 'q', value: i });
    // Scores with 10 kB of metadata: 1,000 of them would pass MAX_REQUEST_BYTES (4 MiB).
    for (let i = 0; i < 1200; i++) loupe.score({ traceId: `m${i}`, name: 'q', value: i, metadata: { note: 'x'.repeat(10_000) } });
    release();
    await loupe.shutdown();
    const perCall = scoreCalls().map((c) => scoresOf(c).length);
    expect(perCall.slice(0, 3)).toEqual([10, MAX_REQUEST_SCORES, MAX_REQUEST_SCORES]);
    for (const call of scoreCalls()) expect(call.bytes).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    // The 12 MB of the last 1,200 took at least three requests more, each under 1,000 scores.
    expect(perCall.length).toBeGreaterThanOrEqual(6);
    expect(Math.max(...perCall.slice(3))).toBeLessThan(MAX_REQUEST_SCORES);
    const values = scoreCalls().flatMap((c) => scoresOf(c).map((s) => `${s.traceId}:${s.value}`));
    expect(new Set(values).size).toBe(3700);
    expect(loupe.stats().scores).toMatchObject({ queued: 0, sent: 3700, dropped: 0 });
  });

  it('shutdown sends the scores still queued', async () => {
    const { loupe, scoreCalls } = client();
    loupe.score({ traceId: 't1', name: 'a', value: 1 });
    await loupe.shutdown();
    expect(scoreCalls()).toHaveLength(1);
    expect(loupe.stats().scores.queued).toBe(0);
  });

  it('sends nothing when disabled', async () => {
    const { loupe, calls } = client(acceptScores, { enabled: false });
    expect(loupe.score({ traceId: 't1', name: 'a', value: 1 })).toEqual(expect.any(String));
    await loupe.shutdown();
    expect(calls).toHaveLength(0);
  });
});
