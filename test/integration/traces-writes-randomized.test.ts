import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { span } from './traces-fixtures.js';

/**
 * Writes, flushes and reads interleaved at random (a seeded generator: LOUPE_TEST_SEED replays a
 * run), every read checked against what the answered writes put in the store. Flushes are held
 * back (one a minute) so that most reads find writes answered and not yet applied: the list
 * lays them over the store (fresh/), one trace's read waits for them, and a flush lands only
 * when a read waits or the step asks for one.
 */

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext({ writer: { minFlushIntervalMs: 60_000 } });
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

/** mulberry32: a small seeded generator, so a failing run can be replayed by its seed. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Expected {
  name: string;
  spans: Set<string>;
  start: string;
}

it('answers every read as the answered writes make the store, whatever flushes land between them', async () => {
  const seed = Number(process.env.LOUPE_TEST_SEED ?? 20261127);
  const random = generator(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const names = ['alpha', 'beta', 'gamma'] as const;
  const expected = new Map<string, Expected>();
  const base = Date.now() - 3_600_000;
  const log: string[] = [];
  const where = () => `seed ${seed}, after: ${log.slice(-6).join(', ')}`;

  const send = async (traceId: string, name: string, spanIds: string[], start: string) => {
    const spans = spanIds.map((spanId) => span({ spanId, startTime: start, endTime: start, durationMs: 0 }));
    const payload = { traces: [{ traceId, name, source: 'sdk', spans }] };
    const res = await ctx.app.inject({ method: 'POST', url: '/api/traces', headers: tenant.headers, payload });
    expect(res.statusCode, `${where()}: ${res.body}`).toBe(200);
  };
  const get = async (url: string) => {
    const res = await ctx.app.inject({ method: 'GET', url, headers: tenant.headers });
    expect(res.statusCode, `${where()}: ${url}: ${res.body}`).toBe(200);
    return res.json<{
      data: Array<{ traceId: string; name: string | null; spanCount: number; spans?: unknown[] }>;
      meta: { pagination: { total: number } };
    }>();
  };

  const flushesBefore = ctx.writer.counts.flushes;
  let reads = 0;
  /** List reads that found answered writes not yet applied (the overlay's case). */
  let overUnapplied = 0;
  for (let step = 0; step < 120; step++) {
    const roll = random();
    const known = [...expected.keys()];
    if (roll < 0.35 || known.length === 0) {
      // A new trace of one to three spans.
      const traceId = `rt-${seed}-${step}`;
      const spanIds = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => `s${i}`);
      const start = new Date(base + step * 1000).toISOString();
      const name = pick(names);
      await send(traceId, name, spanIds, start);
      expected.set(traceId, { name, spans: new Set(spanIds), start });
      log.push(`new ${traceId}`);
    } else if (roll < 0.55) {
      // A trace sent again: the same spans (an upsert) or one more, under a name that may change.
      const traceId = pick(known);
      const trace = expected.get(traceId)!;
      const spanIds = random() < 0.5 ? [...trace.spans] : [`s${trace.spans.size}`];
      const name = pick(names);
      await send(traceId, name, spanIds, trace.start);
      for (const id of spanIds) trace.spans.add(id);
      trace.name = name;
      log.push(`again ${traceId}`);
    } else if (roll < 0.65) {
      await ctx.writer.settled();
      log.push('flush');
    } else if (roll < 0.8) {
      // The newest-first list (merged in the service) or a filtered one (laid over in the statement).
      const name = random() < 0.5 ? undefined : pick(names);
      if (ctx.writer.unapplied(tenant.workspaceId)) overUnapplied += 1;
      const page = await get(`/api/traces?limit=100${name ? `&name=${name}` : ''}`);
      const want = [...expected.entries()].filter(([, t]) => !name || t.name === name);
      expect(page.meta.pagination.total, `${where()}: total of ${name ?? 'all'}`).toBe(want.length);
      expect(page.data.map((item) => item.traceId).sort(), where()).toEqual(want.map(([id]) => id).sort());
      for (const item of page.data) {
        const trace = expected.get(item.traceId)!;
        expect({ name: item.name, spans: item.spanCount }, `${where()}: ${item.traceId}`).toEqual({
          name: trace.name,
          spans: trace.spans.size,
        });
      }
      reads += 1;
      log.push(`list ${name ?? 'all'}`);
    } else {
      // One trace, whole: it waits for that trace's writes.
      const traceId = pick(known);
      const res = await ctx.app.inject({ method: 'GET', url: `/api/traces/${traceId}`, headers: tenant.headers });
      expect(res.statusCode, `${where()}: ${res.body}`).toBe(200);
      const detail = res.json<{ data: { name: string; spans: Array<{ spanId: string }> } }>().data;
      const trace = expected.get(traceId)!;
      expect({ name: detail.name, spans: detail.spans.map((s) => s.spanId).sort() }, `${where()}: ${traceId}`).toEqual({
        name: trace.name,
        spans: [...trace.spans].sort(),
      });
      reads += 1;
      log.push(`read ${traceId}`);
    }
  }
  expect(reads).toBeGreaterThan(20);
  expect(overUnapplied, 'list reads over unapplied writes').toBeGreaterThan(5);
  expect(ctx.writer.counts.flushes - flushesBefore, 'flushes landed between the reads').toBeGreaterThan(3);
  await ctx.writer.settled();
  const all = await get('/api/traces?limit=100');
  expect(all.meta.pagination.total).toBe(expected.size);
});
