import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type Tenant } from '../support/app.js';
import { ingestThread } from '../../src/traces/ingest-thread.js';
import { get, post, span, trace, uniqueId } from './traces-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  const price = { model: 'acme-(mini|max)', matchType: 'regex', provider: 'acme', inputPerMillion: 3, outputPerMillion: 7 };
  const created = await ctx.app.inject({ method: 'POST', url: '/api/models', headers: tenant.headers, payload: price });
  expect(created.statusCode).toBe(201);
});

afterAll(async () => {
  await ctx?.close();
});

/** A body of every kind of trace: priced, repaired, rejected, in a batch. */
function body(tag: string) {
  const generation = (model: string) =>
    span({ spanId: 'g', kind: 'llm.chat', model, provider: 'acme', inputTokens: 1_000, outputTokens: 500, totalTokens: 1_500 });
  return [
    trace({
      traceId: `${tag}-priced`,
      name: 'priced',
      spans: [span({ spanId: 'root', kind: 'agent' }), { ...generation('acme-max'), parentSpanId: 'root' }],
    }),
    trace({
      traceId: `${tag}-surrogate`,
      name: 'lone \ud800 surrogate',
      tags: ['a', 'b'],
      sessionId: 'session-1',
      userId: 'user-1',
      spans: [span({ spanId: 'tool', input: { query: 'q' }, output: { raw: [1, 2] }, attributes: { 'http.status_code': 200 } })],
    }),
    trace({ traceId: `${tag}-duplicate`, spans: [span({ spanId: 'same' }), span({ spanId: 'same' })] }),
    { traceId: `${tag}-no-source`, spans: [span({ spanId: 'x' })] },
    trace({ traceId: `${tag}-unpriced`, spans: [generation('acme-other')] }),
  ];
}

/** An answer and the stored traces with the tag taken out of their ids, to compare two bodies. */
async function stored(tag: string, answer: unknown) {
  const traces = [];
  for (const suffix of ['priced', 'surrogate', 'unpriced']) {
    const res = await get(ctx, tenant, `/api/traces/${tag}-${suffix}`);
    expect(res.statusCode).toBe(200);
    traces.push(res.json().data);
  }
  return JSON.parse(
    JSON.stringify({ answer, traces })
      .replaceAll(tag, 'TAG')
      .replace(/"(createdAt|updatedAt)":"[^"]*"/g, '"$1":""'),
  );
}

describe('the ingest thread', () => {
  it('answers and stores a body as the service thread does: validation, repairs, workspace prices', async () => {
    await ingestThread.whenReady();
    const onThread = uniqueId('thread');
    const before = { ...ingestThread.counts };
    const a = await post(ctx, tenant, body(onThread), '/api/traces/batch');
    expect(a.statusCode).toBe(200);
    expect(ingestThread.counts.prepared).toBe(before.prepared + 1);

    await ingestThread.stop();
    const inService = uniqueId('service');
    const b = await post(ctx, tenant, body(inService), '/api/traces/batch');
    expect(b.statusCode).toBe(200);
    expect(ingestThread.counts.leftToCaller).toBe(before.leftToCaller + 1);
    expect(ingestThread.counts.prepared).toBe(before.prepared + 1);

    const [x, y] = [await stored(onThread, a.json().data), await stored(inService, b.json().data)];
    expect(x).toEqual(y);
    expect(x.answer).toMatchObject({ accepted: 3, rejected: 2 });
    // The workspace's regex price reached the thread; a model it does not match is unpriced.
    const priced = x.traces[0].spans.find((s: { spanId: string }) => s.spanId === 'g');
    expect(priced).toMatchObject({ costUsd: (1_000 * 3 + 500 * 7) / 1e6, costSource: 'computed' });
    expect(x.traces[1].name).toBe('lone \ufffd surrogate');
    expect(x.traces[2].spans[0].costSource).toBe('none');
  });

  it('takes a workspace price created after the thread was sent the earlier ones', async () => {
    await ingestThread.whenReady();
    const other = await ctx.tenant();
    const priceOf = async (model: string) => {
      const t = trace({ spans: [span({ kind: 'llm.chat', model, inputTokens: 1_000_000, outputTokens: 0, totalTokens: 1_000_000 })] });
      expect((await post(ctx, other, [t])).json().data.accepted).toBe(1);
      return (await get(ctx, other, `/api/traces/${t.traceId}`)).json().data.spans[0].costUsd ?? null;
    };
    expect(await priceOf('house-model')).toBeNull();
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/models',
      headers: other.headers,
      payload: { model: 'house-model', matchType: 'exact', inputPerMillion: 2, outputPerMillion: 4 },
    });
    expect(created.statusCode).toBe(201);
    const prepared = ingestThread.counts.prepared;
    expect(await priceOf('house-model')).toBe(2);
    expect(ingestThread.counts.prepared).toBe(prepared + 1);
  });

  it('is started again by a later body once it stopped', async () => {
    await ingestThread.whenReady();
    const starts = ingestThread.counts.starts;
    await ingestThread.stop();
    const t = trace();
    expect((await post(ctx, tenant, [t])).json().data.accepted).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // The first body after a second starts a thread; it is stored on the service thread meanwhile.
    expect((await post(ctx, tenant, [trace()])).json().data.accepted).toBe(1);
    expect(ingestThread.counts.starts).toBe(starts + 1);
    await ingestThread.whenReady();
    const prepared = ingestThread.counts.prepared;
    expect((await post(ctx, tenant, [{ ...t, name: 'sent again' }])).json().data.accepted).toBe(1);
    expect(ingestThread.counts.prepared).toBe(prepared + 1);
    expect((await get(ctx, tenant, `/api/traces/${t.traceId}`)).json().data.name).toBe('sent again');
  });

  it('leaves a body that is not JSON of the shape to fastify, which answers as it always did', async () => {
    await ingestThread.whenReady();
    const send = (url: string, payload: string) =>
      ctx.app.inject({ method: 'POST', url, headers: { ...tenant.headers, 'content-type': 'application/json' }, payload });
    const left = ingestThread.counts.leftToCaller;
    const malformed = await send('/api/traces', '{"traces": [');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Request body is not valid JSON' });
    const poisoned = await send('/api/traces', JSON.stringify({ traces: [] }).replace('{', '{"__proto__":{"polluted":1},'));
    expect(poisoned.statusCode).toBe(400);
    expect(poisoned.json().error.code).toBe('VALIDATION_ERROR');
    const tooMany = await send('/api/traces/batch', JSON.stringify({ traces: Array.from({ length: 101 }, () => trace()) }));
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error.details.issues[0].path).toBe('body.traces');
    const notAList = await send('/api/traces', JSON.stringify({ traces: 'none' }));
    expect(notAList.statusCode).toBe(400);
    expect(ingestThread.counts.leftToCaller).toBe(left + 4);
  });
});
