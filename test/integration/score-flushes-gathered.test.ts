import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { getJson, postScores } from './scores-fixtures.js';

/**
 * A score and its correction in one insert: the score writer carries in one flush whatever
 * arrived while the last one ran (docs/decisions/116-score-ingest-profiled-again.md), so a score
 * and a correction sent in two requests, before their traces, can land together. Here the
 * flushes are held with an interval of a minute, so they wait together until a read hurries them.
 */
let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext({ scoreWriter: { minFlushIntervalMs: 60_000 } });
  tenant = await ctx.tenant();
  // The first flush starts at once; the next waits for the interval, or for a read.
  expect((await postScores(ctx, tenant, { name: 'first', value: 1, sessionId: 'warm-up' })).statusCode).toBe(200);
  await ctx.scoreWriter.settled();
});
afterAll(async () => {
  await ctx?.close();
});

describe('a score and its correction in one insert', () => {
  it('a client-id correction that moves the score to another trace and name leaves nothing on the first, before and after the traces land', async () => {
    const [from, to] = [uniqueId('t'), uniqueId('t')];
    const id = uniqueId('client-score');
    const flushes = ctx.scoreWriter.counts.flushes;
    expect((await postScores(ctx, tenant, { id, name: 'gathered-from', value: 0.2, traceId: from, spanId: 'root' })).statusCode).toBe(200);
    expect((await postScores(ctx, tenant, { id, name: 'gathered-to', value: 0.7, traceId: to })).statusCode).toBe(200);
    // Both rows of the id wait for the same flush.
    const waiting = ctx.scoreWriter.unapplied(tenant.workspaceId)!;
    expect([...waiting.applying, ...waiting.queued.flat()].filter((row) => row.id === id)).toHaveLength(2);
    expect(ctx.scoreWriter.counts.flushes).toBe(flushes);

    const ids = async (query: string) =>
      ((await getJson(ctx, tenant, `/api/scores?${query}`)).json().data as { id: string }[]).map((s) => s.id);
    expect(await ids(`traceId=${from}`)).toEqual([]);
    expect(await ids(`traceId=${to}`)).toEqual([id]);
    expect(await ids('name=gathered-from')).toEqual([]);
    // The read hurried one flush, which carried both.
    expect(ctx.scoreWriter.counts.flushes).toBe(flushes + 1);

    // The traces land after their scores.
    await post(
      ctx,
      tenant,
      [from, to].map((traceId) => ({ traceId, source: 'sdk', spans: [span({ spanId: 'root' })] })),
    );
    expect((await getJson(ctx, tenant, `/api/traces/${from}`)).json().data.scores).toBeUndefined();
    expect((await getJson(ctx, tenant, `/api/traces/${to}`)).json().data.scores).toMatchObject([{ id, name: 'gathered-to', value: 0.7 }]);
    const traces = async (query: string) =>
      ((await getJson(ctx, tenant, `/api/traces?${query}`)).json().data as { traceId: string }[]).map((t) => t.traceId);
    expect(await traces('score=gathered-from')).toEqual([]);
    expect(await traces('score=gathered-to')).toEqual([to]);

    // Deleting the trace the score moved to deletes it.
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${to}`, headers: tenant.headers })).statusCode).toBe(200);
    expect(await ids(`traceId=${to}`)).toEqual([]);
    expect(await ids('name=gathered-to')).toEqual([]);
  });
});
