import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { span } from './traces-fixtures.js';

/**
 * The newest-first list read again and again while clients ingest (unapplied-pages.ts): every
 * answer must be exact at its moment, whatever flush lands between the list's snapshot of the
 * pending writes and its statement. Traces are only added here (each sent twice, the second
 * time re-sending the same spans), so the total never goes down, never counts a trace twice,
 * and a trace's spans are never doubled.
 */

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  // The service's own flushing (the log, flushes as writes come), not held back.
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

it('keeps the list exact while writes are answered, flushed and re-sent', async () => {
  const clients = 6;
  let taken = 0;
  let answered = 0;
  let running = true;
  const send = async () => {
    while (running) {
      const traceId = randomBytes(16).toString('hex');
      const start = new Date(Date.now() - 1000).toISOString();
      const end = new Date().toISOString();
      const payload = {
        traces: [
          {
            traceId,
            source: 'sdk',
            spans: [
              span({ spanId: 'root', kind: 'agent', startTime: start, endTime: end, durationMs: 1000 }),
              span({ spanId: 'llm', parentSpanId: 'root', kind: 'llm.chat', startTime: start, endTime: end, durationMs: 1000 }),
            ],
          },
        ],
      };
      taken += 1;
      for (let again = 0; again < 2; again++) {
        const res = await ctx.app.inject({ method: 'POST', url: '/api/traces', headers: tenant.headers, payload });
        expect(res.statusCode, res.body).toBe(200);
      }
      answered += 1;
    }
  };
  const problems: string[] = [];
  let reads = 0;
  const read = async () => {
    let last = 0;
    while (running) {
      // Every trace answered before the read is in it; none past those taken by its end.
      const floor = answered;
      const res = await ctx.app.inject({ method: 'GET', url: '/api/traces?limit=20', headers: tenant.headers });
      expect(res.statusCode, res.body).toBe(200);
      const ceiling = taken;
      const { data, meta } = res.json<{
        data: Array<{ traceId: string; startTime: string; spanCount: number }>;
        meta: { pagination: { total: number } };
      }>();
      const total = meta.pagination.total;
      reads += 1;
      if (total < last || total < floor || total > ceiling)
        problems.push(`total ${total} after ${last}, answered ${floor}, taken ${ceiling}`);
      if (new Set(data.map((item) => item.traceId)).size !== data.length) problems.push('a trace twice on a page');
      for (const [i, item] of data.entries()) {
        if (item.spanCount !== 2) problems.push(`${item.traceId}: ${item.spanCount} spans`);
        if (i > 0 && data[i - 1]!.startTime < item.startTime) problems.push('out of order');
      }
      last = total;
    }
  };
  const work = [...Array.from({ length: clients }, send), read()];
  await new Promise((resolve) => setTimeout(resolve, 4000));
  running = false;
  await Promise.all(work);

  expect(problems).toEqual([]);
  expect(reads).toBeGreaterThan(10);
  expect(ctx.writer.counts.flushes, 'the writes were flushed while the list was read').toBeGreaterThan(2);
  await ctx.writer.settled();
  const res = await ctx.app.inject({ method: 'GET', url: '/api/traces?limit=1', headers: tenant.headers });
  expect(res.json<{ meta: { pagination: { total: number } } }>().meta.pagination.total).toBe(taken);
});
