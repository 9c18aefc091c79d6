import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { get, post, span, uniqueId } from './traces-fixtures.js';

/**
 * Cursor pages under concurrent ingest: while a client walks a list, new traces arrive (newer,
 * older and between the rows already served) and served traces are re-sent. Every trace that
 * existed before the walk is served exactly once, and no trace twice.
 */
let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

const base = Date.parse('2025-04-01T10:00:00.000Z');
const window = 'startAfter=2025-03-31T00:00:00Z&startBefore=2025-04-03T00:00:00Z';

function traceAt(offsetMs: number, cost: number, id = uniqueId('c')) {
  const start = new Date(base + offsetMs).toISOString();
  const end = new Date(base + offsetMs + 1000).toISOString();
  return {
    traceId: id,
    source: 'sdk',
    sessionId: 'walk',
    spans: [span({ spanId: 'root', kind: 'llm.chat', model: 'm', costUsd: cost, startTime: start, endTime: end, durationMs: 1000 })],
  };
}

async function walk(first: string, during: (page: number) => unknown[]) {
  const served: string[] = [];
  let url = first;
  for (let page = 0; page < 50; page++) {
    const [res] = await Promise.all([get(ctx, tenant, url), post(ctx, tenant, during(page))]);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const items = Array.isArray(body.data) ? body.data : body.data.traces;
    served.push(...items.map((t: { traceId: string }) => t.traceId));
    const next = body.meta.pagination.nextCursor;
    if (next === null) return served;
    url = `${first}&cursor=${next}`;
  }
  throw new Error('the walk did not end');
}

function expectEachOnce(served: string[], existing: string[]) {
  expect(new Set(served).size).toBe(served.length);
  const seen = new Set(served);
  expect(existing.filter((id) => !seen.has(id))).toEqual([]);
}

describe('cursor pages under concurrent ingest', () => {
  const existing: ReturnType<typeof traceAt>[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 24; i++) existing.push(traceAt(i * 60_000, (i % 7) * 0.125 + i / 1024));
    expect((await post(ctx, tenant, existing)).json().data.accepted).toBe(24);
  });
  const ids = () => existing.map((t) => t.traceId);
  /** Per page: a newer trace, an older one, one between served rows, and a re-sent one. */
  const arrivals = (page: number) => [
    traceAt(100 * 60_000 + page * 1000, 9),
    traceAt(-(page + 1) * 60_000, 0.001),
    traceAt(page * 8 * 60_000 + 30_000, 0.3 + page / 100),
    existing[(page * 7) % 24]!,
  ];

  it('newest first (no window)', async () => {
    expectEachOnce(await walk('/api/traces?limit=8&sessionId=walk', arrivals), ids());
  });

  it('sorted by cost, descending, within a window', async () => {
    expectEachOnce(await walk(`/api/traces?limit=8&sort=-costUsd&${window}`, arrivals), ids());
  });

  it('sorted by start time, ascending', async () => {
    expectEachOnce(await walk(`/api/traces?limit=8&sort=startTime&${window}`, arrivals), ids());
  });

  it("a session's traces", async () => {
    expectEachOnce(await walk(`/api/sessions/walk?limit=8&${window}`, arrivals), ids());
  });
});
