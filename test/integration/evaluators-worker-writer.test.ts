import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatorWorkerFor } from '../../src/app.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, trace, span, uniqueId } from './traces-fixtures.js';

/** The score writer of a worker made without the app's (tests, benchmarks): its own, closed when it stops. */
describe('evaluators worker: its own score writer', () => {
  let ctx: TestContext;
  let tenant: Tenant;

  beforeAll(async () => {
    ctx = await createTestContext({ env: { LOUPE_ENCRYPTION_KEY: 'ef'.repeat(32) }, ingestAck: 'store' });
    tenant = await ctx.tenant();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const call = (url: string, payload: object) => ctx.app.inject({ method: 'POST', url, headers: tenant.headers, payload });

  /** An evaluator that checks the trace's output parses as JSON, with one job queued on a new trace; the trace's id. */
  async function queuedJob(): Promise<string> {
    const traceId = uniqueId('own-writer');
    expect(
      (
        await post(ctx, tenant, [
          trace({ traceId, spans: [span({ kind: 'agent', input: { text: 'a question' }, output: { text: '{"ok": true}' } })] }),
        ])
      ).statusCode,
    ).toBe(200);
    const created = await call('/api/evaluators', {
      name: uniqueId('ev'),
      type: 'check',
      check: { type: 'json_parse' },
      score: { name: uniqueId('parses'), dataType: 'boolean' },
    });
    expect(created.statusCode, created.body).toBe(201);
    // The fixtures' traces start in 2025 (traces-fixtures.ts).
    const backfill = await call(`/api/evaluators/${created.json().data.id}/backfill`, {
      from: '2025-01-01T00:00:00.000Z',
      to: '2025-01-02T00:00:00.000Z',
      maxJobs: 1000,
    });
    expect(backfill.statusCode, backfill.body).toBe(200);
    expect(backfill.json().data.queued, backfill.body).toBeGreaterThanOrEqual(1);
    return traceId;
  }

  const scoresOf = async (traceId: string) =>
    (await ctx.app.inject({ method: 'GET', url: `/api/scores?traceId=${traceId}`, headers: tenant.headers })).json().data as unknown[];

  it('writes through a writer of its own, closes it when it stops, and makes another if used again', async () => {
    const worker = evaluatorWorkerFor({ ...ctx, scoreWriter: undefined });
    const own = worker.scoreWriter;
    expect(own).not.toBe(ctx.scoreWriter);
    const traceId = await queuedJob();
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    expect(own.counts.writes).toBeGreaterThanOrEqual(1);
    expect(await scoresOf(traceId)).toHaveLength(1);
    expect(own.closed).toBe(false);
    await worker.stop();
    expect(own.closed).toBe(true);

    // Used again after it stopped: a new writer of its own, the closed one left alone.
    const again = await queuedJob();
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    expect(await scoresOf(again)).toHaveLength(1);
    expect(worker.scoreWriter).not.toBe(own);
    await worker.stop();
    expect(worker.scoreWriter).not.toBe(own);
  });

  it("leaves the app's score writer open when it stops", async () => {
    const worker = evaluatorWorkerFor(ctx);
    expect(worker.scoreWriter).toBe(ctx.scoreWriter);
    await worker.stop();
    expect(ctx.scoreWriter.closed).toBe(false);
  });
});
