import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestLog } from '../../src/traces/ingest-log.js';
import { pendingSummaries } from '../../src/traces/pending-summaries.js';
import { inApplyOrder, nextVersion, toSpanRows } from '../../src/traces/rows.js';
import { WriteBatcher } from '../../src/traces/write-batcher.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { span, uniqueId } from './traces-fixtures.js';

/**
 * The list lays the summaries of answered, unapplied writes over the stored ones
 * (pending-summaries.ts): what it answers while writes wait must be what it answers once they
 * are applied, for every filter, order and page, and no list read may start a flush.
 */

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  // Flushes at most once a minute unless a read waits for them (or a test settles the writer).
  ctx = await createTestContext({ writer: { minFlushIntervalMs: 60_000 } });
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

const at = (minute: number, second = 0) => `2026-04-01T09:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}.000Z`;

function llm(spanId: string, minute: number, extra: Record<string, unknown> = {}) {
  return span({
    spanId,
    parentSpanId: 'root',
    kind: 'llm.chat',
    startTime: at(minute, 10),
    endTime: at(minute, 20),
    durationMs: 10_000,
    model: 'gpt-4o-mini',
    provider: 'openai',
    inputTokens: 100,
    outputTokens: 10,
    costUsd: 0.1,
    ...extra,
  });
}
const root = (minute: number, extra: Record<string, unknown> = {}) =>
  span({ spanId: 'root', kind: 'agent', startTime: at(minute), endTime: at(minute, 30), durationMs: 30_000, ...extra });

async function send(traces: Array<Record<string, unknown>>) {
  const payload = { traces: traces.map((trace) => ({ source: 'sdk', ...trace })) };
  const res = await ctx.app.inject({ method: 'POST', url: '/api/traces', headers: tenant.headers, payload });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().data.accepted, res.body).toBe(traces.length);
}
async function list(url: string) {
  const res = await ctx.app.inject({ method: 'GET', url, headers: tenant.headers });
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res.json<{ data: Array<{ traceId: string; sessionId: string | null; costUsd?: number }>; meta: { pagination: unknown } }>();
}
/** Every page of a cursor walk (from the offset, if any). */
async function walk(url: string) {
  const pages = [];
  let next: string | null = url;
  while (next) {
    const page = await list(next);
    pages.push({ data: page.data, pagination: page.meta.pagination });
    const cursor = (page.meta.pagination as { nextCursor: string | null }).nextCursor;
    next = cursor ? `${url.replace(/&offset=\d+/, '')}&cursor=${encodeURIComponent(cursor)}` : null;
  }
  return pages;
}

const id = (name: string) => `${name}-${uniqueId('u')}`;

describe('the list over answered writes not yet applied', () => {
  const t = { kept: id('kept'), moved: id('moved'), resent: id('resent'), deleted: id('deleted'), fresh: id('fresh'), twice: id('twice') };
  const window = 'startAfter=2026-04-01T00:00:00Z&startBefore=2026-04-02T00:00:00Z';
  const urls = [
    '/api/traces?limit=100',
    '/api/traces?limit=2',
    '/api/traces?limit=2&offset=3',
    `/api/traces?sort=-costUsd&${window}`,
    `/api/traces?sort=costUsd&${window}&limit=3`,
    `/api/traces?sort=durationMs&${window}`,
    `/api/traces?sort=-durationMs&${window}&limit=2&offset=1`,
    `/api/traces?sort=startTime&${window}`,
    '/api/traces?sessionId=session-a',
    '/api/traces?sessionId=session-b',
    '/api/traces?userId=user-1',
    '/api/traces?userId=user-2',
    '/api/traces?tag=blue',
    '/api/traces?tag=blue&tag=green',
    '/api/traces?status=error',
    '/api/traces?model=gpt-4o-mini&minCostUsd=0.15',
    '/api/traces?minDurationMs=31000',
    '/api/traces?environment=production&source=sdk',
    '/api/traces?name=agent-run',
    `/api/traces?startAfter=2026-04-01T09:02:00Z`,
  ];

  it('answers while the writes wait what it answers once they are applied, and starts no flush', async () => {
    // Stored first: three traces the pending writes will change, one they will bring back.
    await send([
      { traceId: t.kept, name: 'agent-run', sessionId: 'session-a', userId: 'user-1', tags: ['blue'], spans: [root(1), llm('l1', 1)] },
      { traceId: t.moved, name: 'agent-run', sessionId: 'session-a', userId: 'user-1', spans: [root(2), llm('l1', 2)] },
      { traceId: t.resent, environment: 'production', sessionId: 'session-b', spans: [root(3), llm('l1', 3)] },
      { traceId: t.deleted, sessionId: 'session-b', userId: 'user-2', spans: [root(4), llm('l1', 4)] },
    ]);
    await ctx.writer.settled();
    const del = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${t.deleted}`, headers: tenant.headers });
    expect(del.statusCode).toBe(200);
    const before = await list('/api/traces?limit=100');

    // Held back: a session move, a field left out, more spans, a deleted trace sent again, new
    // traces, one of them in two writes (the second replacing a span and adding an error).
    const flushes = ctx.writer.counts.flushes;
    await send([{ traceId: t.moved, sessionId: 'session-b', tags: ['green', 'blue'], spans: [llm('l2', 2, { costUsd: 0.25 })] }]);
    await send([{ traceId: t.kept, spans: [llm('l1', 1, { costUsd: 0.3 })] }]);
    await send([{ traceId: t.resent, environment: 'production', spans: [llm('l2', 3, { status: 'error' })] }]);
    await send([{ traceId: t.deleted, sessionId: 'session-b', userId: 'user-2', spans: [root(4), llm('l9', 4)] }]);
    await send([
      {
        traceId: t.fresh,
        name: 'agent-run',
        userId: 'user-2',
        tags: ['blue', 'green'],
        spans: [root(5, { durationMs: 45_000 }), llm('l1', 5)],
      },
      { traceId: t.twice, sessionId: 'session-a', userId: 'user-1', spans: [root(6), llm('l1', 6)] },
    ]);
    await send([{ traceId: t.twice, spans: [llm('l1', 6, { costUsd: 0.05, status: 'error' }), llm('l2', 6)] }]);
    expect(ctx.writer.unapplied(tenant.workspaceId)?.queued.length).toBeGreaterThan(0);

    const pending = [];
    for (const url of urls) pending.push(await walk(url));
    expect(ctx.writer.counts.flushes, 'a list read started a flush').toBe(flushes);

    // The writes are in the answers, not only in the store later.
    const all = pending[0]![0]!.data;
    expect(all.map((x) => x.traceId)).toEqual(expect.arrayContaining(Object.values(t)));
    expect(all).toHaveLength(before.data.length + 3);
    expect(all.find((x) => x.traceId === t.moved)?.sessionId).toBe('session-b');
    expect(all.find((x) => x.traceId === t.kept)).toMatchObject({ sessionId: 'session-a', costUsd: 0.3 });

    await ctx.writer.settled();
    expect(ctx.writer.unapplied(tenant.workspaceId)).toBeUndefined();
    for (const [i, url] of urls.entries()) expect(pending[i], url).toEqual(await walk(url));
  });

  it('reads the spans of include=spans once their traces are applied', async () => {
    const traceId = id('spans');
    await send([{ traceId, spans: [root(7), llm('l1', 7)] }]);
    const flushes = ctx.writer.counts.flushes;
    const page = await list('/api/traces?include=spans&limit=1');
    expect(page.data[0]).toMatchObject({
      traceId,
      spans: [expect.objectContaining({ spanId: 'root' }), expect.objectContaining({ spanId: 'l1' })],
    });
    expect(ctx.writer.counts.flushes).toBeGreaterThan(flushes);
  });
});

describe('summaries of unapplied writes, step by step as the flushes will apply them', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const rows = (traceId: string, extra: Record<string, unknown>, spanId = 'l1') =>
    toSpanRows(tenant.workspaceId, [{ traceId, source: 'sdk', ...extra, spans: [llm(spanId, 8)] } as never]);

  // A trace field sent once, then the same span sent again without it: the field is kept,
  // whether the two writes are applied in two flushes (the summary between them remembers it)
  // or in one (the flush remembers what its replaced rows sent).
  it.each([
    ['the first write applying, the second queued', true],
    ['both queued', false],
  ])('%s', async (_case, firstApplying) => {
    const traceId = id('steps');
    const first = rows(traceId, { sessionId: 'session-s', tags: ['red'] });
    const second = rows(traceId, { environment: 'staging' });
    const floor = nextVersion();
    const applying = firstApplying ? inApplyOrder([first], floor).rows : [];
    const computed = await pendingSummaries(ctx.clickhouse, tenant.workspaceId, {
      applying,
      queued: firstApplying ? [second] : [first, second],
      floor,
    });
    expect(computed.traceIds).toEqual([traceId]);

    // The same writes applied by a writer of their own, in one flush or two.
    const dir = mkdtempSync(path.join(tmpdir(), 'loupe-steps-'));
    dirs.push(dir);
    const writer = new WriteBatcher(ctx.writeClient, { log: IngestLog.open(dir).log, minFlushIntervalMs: 60_000 });
    // A new writer flushes its first write at once; after that, only when settled.
    await writer.write(tenant.workspaceId, rows(id('warm-up'), {}), []);
    await writer.settled();
    await writer.write(tenant.workspaceId, first, [traceId]);
    if (firstApplying) await writer.settled();
    await writer.write(tenant.workspaceId, second, [traceId]);
    await writer.settled();
    await writer.close();

    const stored = await list('/api/traces?limit=100');
    const item = JSON.parse(computed.rows[0]!.item);
    expect(item).toMatchObject({ traceId, environment: 'staging', sessionId: 'session-s', tags: ['red'] });
    expect(stored.data.find((x) => x.traceId === traceId)).toEqual(item);
  });
});
