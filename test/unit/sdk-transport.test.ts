import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Loupe, type LoupeError } from '../../packages/sdk/src/index.js';
import { MAX_REQUEST_BYTES, MAX_REQUEST_SPANS } from '../../packages/sdk/src/transport.js';
import { acceptAll, fakeFetch, json, type Responder } from './sdk-fake-service.js';

function client(responder?: Responder, options: Partial<ConstructorParameters<typeof Loupe>[0]> = {}) {
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
  return { loupe, errors, ...service };
}

const endSpans = (loupe: Loupe, n: number) => {
  for (let i = 0; i < n; i++) loupe.startSpan(`s${i}`).end();
};

/** A client that has sent 10 spans and whose first request hangs until release(): later spans back up. */
function backlogged() {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const sent = client(async (call, i) => {
    if (i === 0) await held;
    return acceptAll(call, i);
  });
  endSpans(sent.loupe, 10);
  return { ...sent, release };
}

describe('SDK transport', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('flushes when 10 spans have accumulated, not before', async () => {
    const { loupe, calls } = client();
    endSpans(loupe, 9);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(0);
    endSpans(loupe, 1);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe('http://loupe.test/api/traces');
    expect(calls[0]!.method).toBe('POST');
    expect(calls[0]!.headers['x-api-key']).toBe('lpk_test');
    expect(calls[0]!.body!.traces.flatMap((t) => t.spans)).toHaveLength(10);
    await loupe.shutdown();
  });

  it('flushes every 5 s what has accumulated', async () => {
    const { loupe, calls, spans } = client();
    endSpans(loupe, 3);
    await vi.advanceTimersByTimeAsync(4999);
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    expect(spans()).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls).toHaveLength(1); // nothing new, no empty request
    await loupe.shutdown();
  });

  it('groups spans by trace id, with the trace fields', async () => {
    const { loupe, calls } = client(acceptAll, { environment: 'staging', sessionId: 'sess-1' });
    const a = loupe.startSpan('a', { kind: 'agent' });
    loupe.startSpan('a.child', { parent: a }).end();
    a.end();
    loupe.startSpan('b').end();
    await loupe.flush();
    const traces = calls[0]!.body!.traces;
    expect(traces).toHaveLength(2);
    expect(traces[0]).toMatchObject({ traceId: a.traceId, name: 'a', source: 'sdk', environment: 'staging', sessionId: 'sess-1' });
    expect(traces[0]!.spans.map((s) => s.name)).toEqual(['a.child', 'a']);
    expect(traces[1]!.spans.map((s) => s.name)).toEqual(['b']);
    await loupe.shutdown();
  });

  it('retries a failed flush after 1 s, 2 s and 4 s, then gives up and reports', async () => {
    const { loupe, calls, errors } = client(() => json(500, { error: { code: 'INTERNAL_ERROR', message: 'boom' } }));
    const start = Date.now();
    endSpans(loupe, 10);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(calls.map((c) => c.at - start)).toEqual([0, 1000, 3000, 7000]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ kind: 'dropped', details: { status: 500, spanCount: 10 } });
    expect(loupe.stats()).toMatchObject({ dropped: 10, sent: 0, requests: 4 });
    await loupe.shutdown();
  });

  it('retries network errors and succeeds when the service comes back', async () => {
    const { loupe, calls, errors } = client((call, i) => {
      if (i < 2) throw new TypeError('fetch failed');
      return acceptAll(call, i);
    });
    const start = Date.now();
    endSpans(loupe, 10);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls.map((c) => c.at - start)).toEqual([0, 1000, 3000]);
    expect(errors).toHaveLength(0);
    expect(loupe.stats()).toMatchObject({ sent: 10, dropped: 0 });
    await loupe.shutdown();
  });

  it('honours Retry-After on 429', async () => {
    const { loupe, calls, errors } = client((call, i) =>
      i === 0 ? json(429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }, { 'retry-after': '7' }) : acceptAll(call, i),
    );
    const start = Date.now();
    endSpans(loupe, 10);
    await vi.advanceTimersByTimeAsync(6999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.map((c) => c.at - start)).toEqual([0, 7000]);
    expect(errors).toHaveLength(0);
    await loupe.shutdown();
  });

  it('gives up at once when Retry-After is longer than maxRetryDelayMs (a daily limit)', async () => {
    const { loupe, calls, errors } = client(() =>
      json(429, { error: { code: 'RATE_LIMITED', message: 'daily limit' } }, { 'retry-after': '86400' }),
    );
    endSpans(loupe, 10);
    await vi.advanceTimersByTimeAsync(0);
    await expect(loupe.shutdown()).resolves.toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(errors[0]).toMatchObject({ kind: 'dropped', details: { status: 429, spanCount: 10 } });
    expect(errors[0]!.message).toMatch(/wait 86400 s/);
  });

  it('does not retry a 400 (validation) and reports it', async () => {
    const { loupe, calls, errors } = client(() => json(400, { error: { code: 'VALIDATION_ERROR', message: 'bad body' } }));
    endSpans(loupe, 10);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(calls).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ kind: 'rejected', details: { status: 400, code: 'VALIDATION_ERROR' } });
    await loupe.shutdown();
  });

  it('does not retry traces the service lists as rejected, and counts the rest as sent', async () => {
    const { loupe, calls, errors } = client((call) =>
      json(200, {
        data: {
          accepted: 1,
          rejected: 1,
          errors: [{ index: 1, traceId: call.body!.traces[1]!.traceId, path: 'spans.0.kind', message: 'bad' }],
        },
        meta: {},
      }),
    );
    loupe.startSpan('one').end();
    loupe.startSpan('two').end();
    loupe.startSpan('two.b', {}).end();
    await loupe.flush();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(calls).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.kind).toBe('rejected');
    expect(errors[0]!.details.errors![0]!.path).toBe('spans.0.kind');
    expect(loupe.stats()).toMatchObject({ sent: 2, rejected: 1 });
    await loupe.shutdown();
  });

  it('shutdown() sends all that remains and waits for it', async () => {
    vi.useRealTimers();
    const { loupe, calls, spans } = client(acceptAll, { flushIntervalMs: 60_000, batchSize: 10 });
    // The 10th span starts a drain; the drain's next request takes all the spans queued behind it.
    for (let i = 0; i < 25; i++) loupe.startSpan(`s${i}`).end();
    await loupe.shutdown();
    expect(spans()).toHaveLength(25);
    expect(calls.map((c) => c.body!.traces.flatMap((t) => t.spans).length)).toEqual([10, 15]);
    expect(loupe.stats()).toMatchObject({ queued: 0, sent: 25 });
  });

  it('a backlog goes out in few requests, at most MAX_REQUEST_SPANS each, spans of a trace together, none lost', async () => {
    vi.useRealTimers();
    // The first request hangs while 2,490 more spans end: a backlog, as under loupe.experiment.
    const { loupe, calls, spans, release } = backlogged();
    const ids = new Set<string>();
    for (let t = 0; t < 830; t++) {
      const root = loupe.startSpan(`item ${t}`);
      loupe.startSpan('task', { parent: root }).end();
      loupe.startSpan('score', { parent: root }).end();
      root.end();
      ids.add(root.traceId);
    }
    release();
    await loupe.shutdown();
    const perCall = calls.map((c) => c.body!.traces.flatMap((t) => t.spans).length);
    expect(perCall).toEqual([10, MAX_REQUEST_SPANS, MAX_REQUEST_SPANS, 2500 - 10 - 2 * MAX_REQUEST_SPANS]);
    expect(new Set(spans().map((s) => s.spanId)).size).toBe(2500);
    expect(loupe.stats()).toMatchObject({ queued: 0, sent: 2500, dropped: 0, rejected: 0, requests: 4 });
    // A trace appears once in a request, with its spans grouped under it.
    for (const call of calls) {
      const traceIds = call.body!.traces.map((t) => t.traceId);
      expect(new Set(traceIds).size).toBe(traceIds.length);
    }
    expect(
      calls.flatMap((c) => c.body!.traces.filter((t) => ids.has(t.traceId)).map((t) => t.spans.length)).reduce((a, b) => a + b, 0),
    ).toBe(2490);
  });

  it('no request over MAX_REQUEST_BYTES: spans with large inputs split the backlog by size, and one too large goes alone', async () => {
    vi.useRealTimers();
    const { loupe, calls, spans, release } = backlogged();
    const large = 'x'.repeat(1.5 * 1024 * 1024);
    const names: string[] = [];
    for (let i = 0; i < 12; i++) {
      const root = loupe.startSpan(`large ${i}`, { input: large });
      loupe.startSpan(`small ${i}`, { parent: root }).end();
      root.end();
      names.push(`small ${i}`, `large ${i}`);
    }
    const huge = loupe.startSpan('huge', { input: 'é'.repeat(2.5 * 1024 * 1024) });
    huge.end();
    endSpans(loupe, 5);
    release();
    await loupe.shutdown();
    const tooLarge = calls.filter((c) => c.bytes > MAX_REQUEST_BYTES);
    expect(tooLarge).toHaveLength(1);
    expect(tooLarge[0]!.body!.traces.flatMap((t) => t.spans).map((s) => s.name)).toEqual(['huge']);
    for (const call of calls.filter((c) => c !== tooLarge[0])) expect(call.bytes).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    // Two 1.5 MiB spans fit in a request, three do not: 6 requests for the 12; then 'huge' alone, then the rest.
    expect(calls).toHaveLength(1 + 6 + 1 + 1);
    const small = Array.from({ length: 10 }, (_, i) => `s${i}`);
    expect(spans().map((s) => s.name)).toEqual([...small, ...names, 'huge', ...small.slice(0, 5)]);
    expect(spans()).toHaveLength(10 + 24 + 1 + 5);
    expect(new Set(spans().map((s) => s.spanId)).size).toBe(40);
    expect(loupe.stats()).toMatchObject({ queued: 0, sent: 40, dropped: 0 });
  });

  it('never blocks or throws into the caller, even when onError throws', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { loupe } = client(
      async (call, i) => {
        await held;
        return acceptAll(call, i);
      },
      {
        onError: () => {
          throw new Error('hook broke');
        },
      },
    );
    const t0 = performance.now();
    endSpans(loupe, 30);
    expect(performance.now() - t0).toBeLessThan(1000);
    release();
    await expect(loupe.shutdown()).resolves.toBeUndefined();
    expect(loupe.stats().sent).toBe(30);
  });

  it('bounds the queue: past maxQueueSize the oldest spans are dropped and counted', async () => {
    const { loupe, spans, errors } = client(acceptAll, { maxQueueSize: 5, batchSize: 100 });
    endSpans(loupe, 8);
    expect(loupe.stats()).toMatchObject({ queued: 5, dropped: 3 });
    // Swap in a working service and send what is left.
    const ok = fakeFetch();
    (loupe.options as { fetch: typeof ok.fetch }).fetch = ok.fetch;
    await loupe.flush();
    expect(ok.spans().map((s) => s.name)).toEqual(['s3', 's4', 's5', 's6', 's7']);
    expect(errors[0]).toMatchObject({ kind: 'dropped', details: { spanCount: 3 } });
    expect(spans()).toHaveLength(0);
    await loupe.shutdown();
  });

  it('sends nothing without an API key, and reads LOUPE_* variables', async () => {
    const off = fakeFetch();
    const quiet = new Loupe({ fetch: off.fetch, env: {} });
    endSpans(quiet, 12);
    await quiet.shutdown();
    expect(off.calls).toHaveLength(0);

    const on = fakeFetch();
    const fromEnv = new Loupe({
      fetch: on.fetch,
      env: {
        LOUPE_API_KEY: 'lpk_env',
        LOUPE_BASE_URL: 'http://env.test/',
        LOUPE_BATCH_SIZE: '2',
        LOUPE_ENVIRONMENT: 'development',
        LOUPE_SOURCE: 'my-app',
      },
    });
    expect(fromEnv.options).toMatchObject({
      baseUrl: 'http://env.test',
      batchSize: 2,
      flushIntervalMs: 5000,
      maxRetries: 3,
      retryBaseDelayMs: 1000,
    });
    endSpans(fromEnv, 2);
    await fromEnv.shutdown();
    expect(on.calls[0]!.url).toBe('http://env.test/api/traces');
    expect(on.calls[0]!.headers['x-api-key']).toBe('lpk_env');
    expect(on.calls[0]!.body!.traces[0]).toMatchObject({ source: 'my-app', environment: 'development' });
    expect(() => new Loupe({ env: { LOUPE_BATCH_SIZE: 'ten' } })).toThrow(/batchSize/);
  });
});
