import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestLog } from '../../src/traces/writer/ingest-log.js';
import { pendingSummaries, pendingTraces } from '../../src/traces/fresh/pending-summaries.js';
import { toSpanRows } from '../../src/traces/ingest/ingest.js';
import { inApplyOrder } from '../../src/traces/writer/flush.js';
import { nextVersion } from '../../src/traces/model/version.js';
import type { TraceSummaryRow } from '../../src/traces/tables/traces-table.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
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
    const unapplied = ctx.writer.unapplied(tenant.workspaceId)!;
    expect(unapplied.queued.length).toBeGreaterThan(0);
    // The newest-first list's start times and page summaries agree with every pending trace's summary.
    const full = await pendingSummaries(ctx.clickhouse, tenant.workspaceId, unapplied);
    const lazy = await pendingTraces(ctx.clickhouse, tenant.workspaceId, unapplied, [t.kept, t.moved, t.resent, t.deleted]);
    expect(lazy.starts).toEqual(new Map(full.rows.map((row) => [row.trace_id, row.start_time])));
    const byId = (rows: TraceSummaryRow[]) => new Map(rows.map(({ version: _version, ...row }) => [row.trace_id, row]));
    expect(byId(await lazy.summaries(full.traceIds))).toEqual(byId(full.rows));

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

describe('the newest-first list over pending traces the store holds nothing of', () => {
  // The service merges them (unapplied-pages.ts): their start times from the writes, a summary
  // only for the page's rows; what it answers must be what the store answers once they apply.
  it('answers pages, offsets, cursor walks and counts as the applied store does, and starts no flush', async () => {
    const own = await ctx.tenant();
    const as = (headers: Record<string, string>) => async (url: string) => {
      const res = await ctx.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      const { data, meta } = res.json<{ data: Array<{ traceId: string }>; meta: { pagination: { nextCursor: string | null } } }>();
      return { data, pagination: meta.pagination };
    };
    const read = as(own.headers);
    const walkOwn = async (url: string) => {
      const pages = [];
      let next: string | null = url;
      while (next) {
        const page = await read(next);
        pages.push(page);
        next = page.pagination.nextCursor ? `${url}&cursor=${encodeURIComponent(page.pagination.nextCursor)}` : null;
      }
      return pages;
    };
    const post = async (traces: Array<Record<string, unknown>>) => {
      const payload = { traces: traces.map((trace) => ({ source: 'sdk', ...trace })) };
      const res = await ctx.app.inject({ method: 'POST', url: '/api/traces', headers: own.headers, payload });
      expect(res.statusCode, res.body).toBe(200);
    };
    // Stored: six traces a minute apart, two of them at the same start (ties by trace id).
    const stored = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => id(`stored-${name}`));
    await post(stored.map((traceId, i) => ({ traceId, spans: [root(10 + Math.min(i, 4)), llm('l1', 10 + Math.min(i, 4))] })));
    await ctx.writer.settled();

    const flushes = ctx.writer.counts.flushes;
    const fresh = {
      newest: id('p-newest'),
      between: id('p-between'),
      tie: id('p-tie'),
      oldest: id('p-oldest'),
      twice: id('p-twice'),
      replaced: id('p-replaced'),
    };
    await post([
      { traceId: fresh.newest, name: 'agent-run', spans: [root(30), llm('l1', 30)] },
      { traceId: fresh.between, spans: [root(12, { startTime: at(12, 5) }), llm('l1', 12)] },
    ]);
    // At the same start as two stored traces; before every stored one; in two writes.
    await post([{ traceId: fresh.tie, spans: [root(14), llm('l1', 14)] }]);
    await post([{ traceId: fresh.oldest, spans: [root(1), llm('l1', 1)] }]);
    await post([{ traceId: fresh.twice, spans: [root(20), llm('l1', 20)] }]);
    // Its span sent again, starting earlier than its root: the replaced row's start no longer counts.
    await post([{ traceId: fresh.twice, spans: [llm('l1', 20, { startTime: at(19, 50) })] }]);
    await post([{ traceId: fresh.replaced, spans: [root(25), llm('l1', 25, { startTime: at(2) })] }]);
    await post([{ traceId: fresh.replaced, spans: [llm('l1', 25)] }]);

    const pending = ctx.writer.unapplied(own.workspaceId)!;
    expect(pending.queued.length).toBeGreaterThan(0);
    const { starts, summaries } = await pendingTraces(ctx.clickhouse, own.workspaceId, pending, []);
    expect([...starts.keys()].sort()).toEqual(Object.values(fresh).sort());
    for (const summary of await summaries([...starts.keys()]))
      expect(starts.get(summary.trace_id), summary.trace_id).toBe(summary.start_time);

    const urls = ['/api/traces?limit=100', '/api/traces?limit=3', '/api/traces?limit=2&offset=5', '/api/traces?limit=1&offset=20'];
    const answered = [];
    for (const url of urls) answered.push(await read(url));
    const walks = [await walkOwn('/api/traces?limit=2'), await walkOwn('/api/traces?limit=5')];
    expect(ctx.writer.counts.flushes, 'a list read started a flush').toBe(flushes);

    const all = answered[0]!.data.map((x) => x.traceId);
    expect(all).toHaveLength(stored.length + Object.keys(fresh).length);
    expect(all[0]).toBe(fresh.newest);
    expect(all.at(-1)).toBe(fresh.oldest);

    await ctx.writer.settled();
    expect(ctx.writer.unapplied(own.workspaceId)).toBeUndefined();
    for (const [i, url] of urls.entries()) expect(answered[i], url).toEqual(await read(url));
    expect(walks).toEqual([await walkOwn('/api/traces?limit=2'), await walkOwn('/api/traces?limit=5')]);
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
    const unapplied = { applying, queued: firstApplying ? [second] : [first, second], floor };
    const computed = await pendingSummaries(ctx.clickhouse, tenant.workspaceId, unapplied);
    expect(computed.traceIds).toEqual([traceId]);
    // The store holds nothing of the trace: the newest-first list's start time and summary agree.
    const { starts, summaries } = await pendingTraces(ctx.clickhouse, tenant.workspaceId, unapplied, []);
    expect(await summaries([traceId])).toEqual(computed.rows);
    expect(starts.get(traceId)).toBe(computed.rows[0]!.start_time);

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

  it('replays a trace the statement under way found the store holding nothing of from its rows, without reading the store', async () => {
    const traceId = id('fresh');
    // What the store holds of the trace (an earlier write), and a statement under way writing more.
    const dir = mkdtempSync(path.join(tmpdir(), 'loupe-fresh-'));
    dirs.push(dir);
    const writer = new WriteBatcher(ctx.writeClient, { log: IngestLog.open(dir).log });
    await writer.write(tenant.workspaceId, rows(traceId, { sessionId: 'session-f' }, 'l0'), [traceId]);
    await writer.settled();
    await writer.close();
    const floor = nextVersion();
    const unapplied = { applying: inApplyOrder([rows(traceId, {}, 'l1')], floor).rows, queued: [], floor };

    const read = await pendingTraces(ctx.clickhouse, tenant.workspaceId, unapplied, [traceId]);
    const [withStored] = await read.summaries([traceId]);
    expect(withStored).toMatchObject({ span_count: 2, session_id: 'session-f' });
    // Told the statement under way found nothing stored, the rows it holds are the whole trace.
    const fresh = await pendingTraces(ctx.clickhouse, tenant.workspaceId, { ...unapplied, freshUnderWay: (t) => t === traceId }, [traceId]);
    expect(await fresh.summaries([traceId])).toEqual(
      await (await pendingTraces(ctx.clickhouse, tenant.workspaceId, unapplied, [])).summaries([traceId]),
    );
    expect((await fresh.summaries([traceId]))[0]).toMatchObject({ span_count: 1, session_id: '' });
    // The overlay of the other lists takes it the same way.
    const overlaid = await pendingSummaries(ctx.clickhouse, tenant.workspaceId, { ...unapplied, freshUnderWay: (t) => t === traceId });
    expect(overlaid.rows).toEqual(await fresh.summaries([traceId]));
  });
});
