import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Loupe, type SpanPayload } from '../../packages/sdk/src/index.js';
import { fakeFetch } from './sdk-fake-service.js';

function client() {
  const service = fakeFetch();
  const loupe = new Loupe({ apiKey: 'lpk_test', baseUrl: 'http://loupe.test', fetch: service.fetch, env: {}, onError: () => {} });
  const sent = async () => {
    await loupe.flush();
    return new Map<string, SpanPayload>(service.spans().map((s) => [s.name, s]));
  };
  return { loupe, sent, service };
}

describe('SDK spans and context', () => {
  it('makes 32-hex trace ids, 16-hex span ids, ISO times with microseconds and a monotonic duration', async () => {
    const { loupe, sent, service } = client();
    const span = loupe.startSpan('root', { kind: 'llm.chat', input: 'hi' });
    await sleep(15);
    span.setMetrics({ model: 'gpt-x', provider: 'openai', inputTokens: 3, outputTokens: 4, costUsd: 0.01, ttftMs: 5 });
    span.setAttribute('a', 1).setAttributes({ b: 'two' }).addEvent('first-token', { at: 1 });
    span.setOutput({ messages: [{ role: 'assistant', content: 'hello' }] });
    span.end();
    const s = (await sent()).get('root')!;
    expect(service.calls[0]!.body!.traces[0]!.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(s.parentSpanId).toBeUndefined();
    expect(s.startTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(s.durationMs).toBeGreaterThanOrEqual(14);
    expect(Date.parse(s.endTime) - Date.parse(s.startTime)).toBeCloseTo(s.durationMs, -1);
    expect(s).toMatchObject({
      kind: 'llm.chat',
      status: 'unset',
      input: { text: 'hi' },
      model: 'gpt-x',
      provider: 'openai',
      inputTokens: 3,
      outputTokens: 4,
      totalTokens: 7,
      costUsd: 0.01,
      ttftMs: 5,
      attributes: { a: 1, b: 'two' },
      metadata: { latencyMs: s.durationMs },
    });
    expect(s.events).toEqual([{ name: 'first-token', timestamp: expect.stringMatching(/Z$/), attributes: { at: 1 } }]);
  });

  it('end({status, statusMessage}) sets the status; a second end does nothing', async () => {
    const { loupe, sent } = client();
    const span = loupe.startSpan('x');
    span.end({ status: 'error', statusMessage: 'nope' });
    span.end({ status: 'ok' });
    const s = (await sent()).get('x')!;
    expect(s).toMatchObject({ status: 'error', statusMessage: 'nope' });
  });

  it('a span started while another is active becomes its child, also across await', async () => {
    const { loupe, sent } = client();
    await loupe.withSpan('outer', { kind: 'agent' }, async () => {
      await sleep(1);
      await loupe.withSpan('middle', { kind: 'chain' }, async () => {
        await sleep(1);
        loupe.startSpan('leaf', { kind: 'tool' }).end();
      });
      setTimeout(() => {}, 0);
      await new Promise((r) => setImmediate(r));
      loupe.startSpan('after', { kind: 'tool' }).end();
    });
    const spans = await sent();
    const outer = spans.get('outer')!;
    expect(outer.parentSpanId).toBeUndefined();
    expect(spans.get('middle')!.parentSpanId).toBe(outer.spanId);
    expect(spans.get('leaf')!.parentSpanId).toBe(spans.get('middle')!.spanId);
    expect(spans.get('after')!.parentSpanId).toBe(outer.spanId);
    expect(loupe.currentSpan()).toBeUndefined();
  });

  it('parallel branches (Promise.all) keep their own parents', async () => {
    const { loupe, sent, service } = client();
    await loupe.withSpan('root', async () => {
      await Promise.all(
        ['a', 'b', 'c'].map((branch, i) =>
          loupe.withSpan(branch, async () => {
            await sleep(10 - i * 3);
            await loupe.withSpan(`${branch}.step`, async () => {
              await sleep(i * 3);
              return branch;
            });
          }),
        ),
      );
    });
    const spans = await sent();
    for (const branch of ['a', 'b', 'c']) {
      expect(spans.get(branch)!.parentSpanId).toBe(spans.get('root')!.spanId);
      expect(spans.get(`${branch}.step`)!.parentSpanId).toBe(spans.get(branch)!.spanId);
    }
    expect(spans.size).toBe(7);
    expect(new Set(service.calls.flatMap((c) => c.body!.traces.map((t) => t.traceId))).size).toBe(1);
  });

  it('with no active span a new trace starts; parent: null forces one', async () => {
    const { loupe, service } = client();
    const a = loupe.startSpan('a');
    const b = loupe.startSpan('b');
    expect(a.traceId).not.toBe(b.traceId);
    loupe.withSpan('c', () => {
      const d = loupe.startSpan('d', { parent: null });
      expect(d.parentSpanId).toBeUndefined();
      expect(d.traceId).not.toBe(loupe.currentSpan()!.traceId);
      d.end();
    });
    a.end();
    b.end();
    await loupe.flush();
    expect(service.calls[0]!.body!.traces).toHaveLength(4);
  });

  it('withSpan: ok on return, error with the message on throw (rethrown), sync and async', async () => {
    const { loupe, sent } = client();
    expect(loupe.withSpan('sync-ok', () => 42)).toBe(42);
    expect(() =>
      loupe.withSpan('sync-err', () => {
        throw new Error('sync failure');
      }),
    ).toThrow('sync failure');
    await expect(loupe.withSpan('async-ok', async () => 'v')).resolves.toBe('v');
    await expect(
      loupe.withSpan('async-err', async () => {
        await sleep(1);
        throw new Error('async failure');
      }),
    ).rejects.toThrow('async failure');
    loupe.withSpan('explicit', (span) => {
      span.setStatus('error', 'chose to fail');
    });
    const spans = await sent();
    expect(spans.get('sync-ok')).toMatchObject({ status: 'ok' });
    expect(spans.get('sync-err')).toMatchObject({ status: 'error', statusMessage: 'sync failure' });
    expect(spans.get('async-ok')).toMatchObject({ status: 'ok' });
    expect(spans.get('async-err')).toMatchObject({ status: 'error', statusMessage: 'async failure' });
    expect(spans.get('explicit')).toMatchObject({ status: 'error', statusMessage: 'chose to fail' });
  });

  it('wrap: runs as the active span, records arguments and result, sets ok / error', async () => {
    const { loupe, sent } = client();
    function sum(x: number, y: number) {
      return x + y;
    }
    const add = loupe.wrap(sum); // named after the function
    const search = loupe.wrap(
      async (query: string) => {
        await sleep(1);
        loupe.startSpan('inner').end();
        return [query];
      },
      { name: 'search', kind: 'retrieval' },
    );
    const broken = loupe.wrap(
      async () => {
        throw new TypeError('bad input');
      },
      { name: 'broken', kind: 'tool' },
    );
    const thrower = loupe.wrap(
      () => {
        // A thrown non-Error is what this case is about.
        // eslint-disable-next-line @typescript-eslint/only-throw-error
        throw 'plain string';
      },
      { name: 'thrower', captureInput: false },
    );
    expect(add(2, 3)).toBe(5);
    await expect(search('cats')).resolves.toEqual(['cats']);
    await expect(broken()).rejects.toThrow(TypeError);
    expect(() => thrower()).toThrow();
    const spans = await sent();
    expect(spans.get(sum.name)).toMatchObject({ status: 'ok', input: { raw: [2, 3] }, output: { raw: 5 }, kind: 'custom' });
    expect(spans.get('search')).toMatchObject({ status: 'ok', kind: 'retrieval', output: { raw: ['cats'] } });
    expect(spans.get('inner')!.parentSpanId).toBe(spans.get('search')!.spanId);
    expect(spans.get('broken')).toMatchObject({ status: 'error', statusMessage: 'bad input' });
    expect(spans.get('thrower')).toMatchObject({ status: 'error', statusMessage: 'plain string' });
    expect(spans.get('thrower')!.input).toBeUndefined();
  });

  it('a circular or odd input never breaks the payload', async () => {
    const { loupe, sent } = client();
    const cyclic: Record<string, unknown> = { big: 10n, when: new Date(0), fn: () => 1 };
    cyclic.self = cyclic;
    loupe.startSpan('odd', { input: { raw: cyclic }, attributes: { nan: Number.NaN } }).end();
    const s = (await sent()).get('odd')!;
    expect(s.input).toEqual({ raw: { big: '10', when: '1970-01-01T00:00:00.000Z', fn: '[Function fn]', self: '[Circular]' } });
    expect(s.attributes).toEqual({ nan: 'NaN' });
  });
});
