import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newScoreWriter } from '../../src/app.js';
import { openScoreWriter } from '../../src/server.js';
import { VersionClock } from '../../src/scores/model/version-clock.js';
import { ingestScores } from '../../src/scores/service/ingest.js';
import type { LoggedScoreRow } from '../../src/scores/tables/scores-table.js';
import { IngestLog } from '../../src/traces/writer/ingest-log.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { getJson, postScores } from './scores-fixtures.js';
import { sqlRows } from './sql-fixtures.js';

/**
 * Scores answered once logged (docs/decisions/109-score-ingest-through-the-write-path.md): the
 * score writer flushes at most once a minute unless a read waits, so every score below is
 * answered and not yet applied when it is read; each read must wait for it (and hurry it).
 */
let ctx: TestContext;
let tenant: Tenant;
const dirs: string[] = [];
beforeAll(async () => {
  ctx = await createTestContext({ scoreWriter: { minFlushIntervalMs: 60_000 } });
  tenant = await ctx.tenant();
  // The first flush starts at once; those after it wait for the interval, or for a read.
  expect((await postScores(ctx, tenant, { name: 'first', value: 1, sessionId: 'warm-up' })).statusCode).toBe(200);
  await ctx.scoreWriter.settled();
});
afterAll(async () => {
  await ctx?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The ids of the workspace's scores answered and not yet applied (looked at without hurrying the flush). */
const unappliedIds = (who: Tenant) => {
  const unapplied = ctx.scoreWriter.unapplied(who.workspaceId);
  return unapplied ? [...unapplied.applying, ...unapplied.queued.flat()].map((row) => row.id) : [];
};

/** Posts a score and checks it is answered and still waiting for its flush; its id. */
async function pendingScore(payload: Record<string, unknown>, who = tenant): Promise<string> {
  const res = await postScores(ctx, who, payload);
  expect(res.statusCode, res.body).toBe(200);
  const id = res.json().data.ids[0] as string;
  expect(unappliedIds(who)).toContain(id);
  return id;
}

/** A stored trace of one LLM call in a session. */
async function storedTrace(): Promise<{ traceId: string; sessionId: string }> {
  const traceId = uniqueId('t');
  const sessionId = uniqueId('session');
  const recent = { startTime: new Date(Date.now() - 60_000).toISOString(), endTime: new Date(Date.now() - 30_000).toISOString() };
  const root = span({ spanId: 'root', kind: 'llm.chat', model: 'm', durationMs: 30_000, ...recent });
  const res = await post(ctx, tenant, [{ traceId, sessionId, source: 'sdk', spans: [root] }]);
  expect(res.statusCode, res.body).toBe(200);
  return { traceId, sessionId };
}

describe('a score answered before its flush', () => {
  it('is readable at once by GET /api/scores and GET /api/scores/:id', async () => {
    const traceId = uniqueId('t');
    const id = await pendingScore({ name: 'helpfulness', value: 0.25, traceId });
    const list = await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`);
    expect(list.json().data.map((s: { id: string }) => s.id)).toEqual([id]);
    const other = await pendingScore({ name: 'helpfulness', value: 0.5, traceId: uniqueId('t') });
    expect((await getJson(ctx, tenant, `/api/scores/${other}`)).json().data).toMatchObject({ id: other, value: 0.5 });
  });

  it('is carried by the trace read, the trace list (averages and the score filter) and the session read', async () => {
    const { traceId, sessionId } = await storedTrace();
    const onTrace = await pendingScore({ name: 'grounded', value: 0.75, traceId });
    const detail = (await getJson(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail.scores.map((s: { id: string }) => s.id)).toEqual([onTrace]);

    await pendingScore({ name: 'grounded', value: 0.25, traceId, spanId: 'root' });
    const items = (await getJson(ctx, tenant, '/api/traces?limit=100')).json().data;
    expect(items.find((item: { traceId: string }) => item.traceId === traceId).scores).toEqual({ grounded: { n: 2, mean: 0.5 } });

    const name = uniqueId('filtered');
    await pendingScore({ name, value: 0.9, traceId });
    const filtered = (await getJson(ctx, tenant, `/api/traces?score=${name}&scoreMin=0.8`)).json().data;
    expect(filtered.map((item: { traceId: string }) => item.traceId)).toEqual([traceId]);

    const onSession = uniqueId('on-session');
    await pendingScore({ name: onSession, value: 3, sessionId });
    expect((await getJson(ctx, tenant, `/api/sessions/${sessionId}`)).json().data.scores[onSession]).toEqual({ n: 1, mean: 3 });
  });

  it('is counted by the stats by score, the score analytics and the scores view of SQL', async () => {
    const { traceId } = await storedTrace();
    const byStats = uniqueId('stats');
    await pendingScore({ name: byStats, value: 2, traceId });
    const window = `from=${new Date(Date.now() - 3600_000).toISOString()}&to=${new Date(Date.now() + 3600_000).toISOString()}`;
    const stats = await getJson(ctx, tenant, `/api/traces/stats?groupBy=score&${window}`);
    expect(
      stats.json().data.groups.find((g: { key: string }) => g.key === byStats),
      stats.body,
    ).toMatchObject({ traceCount: 1 });

    const byAnalytics = uniqueId('analytics');
    const at = '2026-03-01T10:00:00.000Z';
    await pendingScore({ name: byAnalytics, value: 4, traceId, timestamp: at });
    const analytics = (
      await getJson(ctx, tenant, `/api/scores/analytics?name=${byAnalytics}&from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z`)
    ).json();
    expect(analytics.data.scores).toMatchObject([{ name: byAnalytics, count: 1, mean: 4 }]);

    const bySql = await pendingScore({ name: 'by-sql', value: 6, traceId });
    expect(
      await sqlRows(ctx.app, tenant, 'SELECT id, value FROM scores WHERE trace_id = {t:String} AND name = {n:String}', {
        t: traceId,
        n: 'by-sql',
      }),
    ).toEqual([{ id: bySql, value: 6 }]);
  });
});

describe('corrections and deletes of scores not yet applied', () => {
  it('a re-sent id corrects its score, keeping its first creation time, never a second score', async () => {
    const traceId = uniqueId('t');
    const id = uniqueId('score');
    await pendingScore({ id, name: 'q', value: 1, traceId });
    const first = unappliedIds(tenant).length;
    await pendingScore({ id, name: 'q', value: 2, traceId, comment: 'corrected' });
    expect(unappliedIds(tenant).length).toBe(first + 1);
    const createdAt = ctx.scoreWriter
      .unapplied(tenant.workspaceId)!
      .queued.flat()
      .filter((row) => row.id === id)
      .map((row) => row.created_at);
    expect(new Set(createdAt).size).toBe(1);
    const list = (await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data;
    expect(list).toMatchObject([{ id, value: 2, comment: 'corrected' }]);
    // Corrected again once applied: still one score, its creation time the first one's.
    const applied = list[0].createdAt as string;
    await pendingScore({ id, name: 'q', value: 3, traceId });
    expect((await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data).toMatchObject([
      { id, value: 3, createdAt: applied },
    ]);
  });

  it('deleting a trace deletes its scores not yet applied; deleting a score not yet applied deletes it', async () => {
    const { traceId } = await storedTrace();
    await pendingScore({ name: 'q', value: 1, traceId });
    await pendingScore({ name: 'r', value: 1, traceId, spanId: 'root' });
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${traceId}`, headers: tenant.headers })).statusCode).toBe(200);
    await ctx.scoreWriter.settled();
    expect((await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data).toEqual([]);

    const id = await pendingScore({ name: 'q', value: 1, traceId: uniqueId('t') });
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/scores/${id}`, headers: tenant.headers })).statusCode).toBe(200);
    await ctx.scoreWriter.settled();
    expect((await getJson(ctx, tenant, `/api/scores/${id}`)).statusCode).toBe(404);
  });

  it('another workspace never sees them, nor waits for them', async () => {
    const other = await ctx.tenant();
    const traceId = uniqueId('t');
    const id = await pendingScore({ name: 'secret', value: 1, traceId });
    expect(ctx.scoreWriter.readable(other.workspaceId)).toBeUndefined();
    expect(unappliedIds(other)).toEqual([]);
    expect((await getJson(ctx, other, `/api/scores?traceId=${traceId}`)).json().data).toEqual([]);
    expect((await getJson(ctx, other, `/api/scores/${id}`)).statusCode).toBe(404);
    // Its own read of the same trace id waits for nothing of the first workspace's: the score is still waiting.
    expect(unappliedIds(tenant)).toContain(id);
    expect((await getJson(ctx, tenant, `/api/scores/${id}`)).statusCode).toBe(200);
  });
});

describe('the score log across a restart', () => {
  it('keeps a score answered while the store was down, and the next start applies it', async () => {
    const base = mkdtempSync(path.join(tmpdir(), 'loupe-score-log-'));
    dirs.push(base);
    const dir = path.join(base, 'scores');
    // A real client whose server does not answer: the store is down, nothing is faked.
    const down = createClient({ url: 'http://127.0.0.1:9', request_timeout: 2_000, log: { level: ClickHouseLogLevel.OFF } });
    const writer = newScoreWriter(down, { log: IngestLog.open<LoggedScoreRow>(dir).log });
    const stores = { clickhouse: ctx.clickhouse, sql: ctx.sql, clock: new VersionClock(), writes: writer };
    const traceId = uniqueId('t');
    const result = await ingestScores(stores, { workspaceId: tenant.workspaceId, authorId: 'test', defaultSource: 'api' }, [
      { id: `${traceId}-a`, name: 'q', value: 0.5, traceId },
      { id: `${traceId}-b`, name: 'ok', value: true, traceId },
    ]);
    expect(result).toMatchObject({ accepted: 2, rejected: 0 });
    // The process stops before any flush lands: the log keeps the write.
    expect(await writer.close(200)).toBe(false);
    await down.close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.log'))).toHaveLength(1);
    expect((await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data).toEqual([]);

    // The next start opens the log as the service does and applies what it holds first.
    const config = { ...ctx.config, LOUPE_INGEST_ACK: 'log' as const, LOUPE_INGEST_LOG_DIR: base };
    const again = openScoreWriter(config, ctx.writeClient, pino({ level: 'silent' }));
    await again.settled();
    const stored = (await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data;
    expect(stored.map((s: { id: string; value: number }) => [s.id, s.value]).sort()).toEqual([
      [`${traceId}-a`, 0.5],
      [`${traceId}-b`, 1],
    ]);
    expect(await again.close()).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.log'))).toEqual([]);
  });

  it('applies lines logged as objects (before decision 118) and as values, every column kept', async () => {
    const base = mkdtempSync(path.join(tmpdir(), 'loupe-score-log-'));
    dirs.push(base);
    const dir = path.join(base, 'scores');
    const traceId = uniqueId('t');
    const now = '2026-11-28 08:00:00.000000';
    const full = {
      workspace_id: tenant.workspaceId,
      data_type: 'categorical' as const,
      value: 2,
      string_value: 'good',
      comment: 'a "quoted"\ncomment, ünïcode',
      metadata: '{"k":[1,2]}',
      source: 'annotation',
      environment: 'staging',
      trace_id: traceId,
      span_id: 'root',
      author_id: 'someone',
      config_id: 'cfg-1',
      eval_trace_id: 'judge-1',
      timestamp: now,
      created_at: now,
    };
    const rows = [
      { ...full, id: `${traceId}-object`, name: 'object', version: '5' },
      { ...full, id: `${traceId}-values`, name: 'values', version: '6' },
    ];
    // The first write as the log held it before (its rows as objects, no lines given), the
    // second as the writer logs it now (its rows' lines, arrays of values).
    const { log } = IngestLog.open<LoggedScoreRow>(dir);
    await log.append({ workspaceId: tenant.workspaceId, traceIds: [traceId], rows: [rows[0]!] }).durable;
    const down = createClient({ url: 'http://127.0.0.1:9', request_timeout: 2_000, log: { level: ClickHouseLogLevel.OFF } });
    const writer = newScoreWriter(down, { log });
    await writer.write(tenant.workspaceId, [rows[1]!], [traceId]);
    expect(await writer.close(200)).toBe(false);
    await down.close();
    const logged = readFileSync(
      path.join(
        dir,
        readdirSync(dir).find((f) => f.endsWith('.log'))!,
      ),
      'utf8',
    );
    expect(logged).toContain(`"id":"${traceId}-object"`);
    expect(logged).toContain(`["${tenant.workspaceId}","${traceId}-values"`);

    const config = { ...ctx.config, LOUPE_INGEST_ACK: 'log' as const, LOUPE_INGEST_LOG_DIR: base };
    const again = openScoreWriter(config, ctx.writeClient, pino({ level: 'silent' }));
    await again.settled();
    expect(await again.close()).toBe(true);
    const stored = await sqlRows(
      ctx.app,
      tenant,
      `SELECT id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id, span_id, session_id,
        author_id, config_id, eval_trace_id FROM scores WHERE trace_id = {t:String} ORDER BY id`,
      { t: traceId },
    );
    const want = ({ workspace_id: _, timestamp: __, created_at: ___, version: ____, ...row }: (typeof rows)[number]) => ({
      ...row,
      session_id: '',
    });
    expect(stored).toEqual(rows.map(want));
  });
});

/**
 * A score and its correction in one insert: a flush carries whatever arrived while the last one
 * ran (docs/decisions/116-score-ingest-profiled-again.md), so a score and a correction sent in two
 * requests, before their traces, can land together (the interval above holds them).
 */
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

  it('a generated id and its correction moving it to another trace and name: the first row skips the look-up, the correction finds it', async () => {
    const [from, to, later] = [uniqueId('t'), uniqueId('t'), uniqueId('t')];
    const first = await postScores(ctx, tenant, { name: 'fresh-from', value: 0.2, traceId: from });
    const id = first.json().data.ids[0] as string;
    // The correction names the id it was answered, and waits for the same flush as the score.
    expect((await postScores(ctx, tenant, { id, name: 'fresh-to', value: 0.7, traceId: to })).statusCode).toBe(200);
    const waiting = ctx.scoreWriter.unapplied(tenant.workspaceId)!;
    expect([...waiting.applying, ...waiting.queued.flat()].filter((row) => row.id === id)).toHaveLength(2);

    const ids = async (query: string) =>
      ((await getJson(ctx, tenant, `/api/scores?${query}`)).json().data as { id: string }[]).map((s) => s.id);
    expect(await ids(`traceId=${from}`)).toEqual([]);
    expect(await ids('name=fresh-from')).toEqual([]);
    expect(await ids(`traceId=${to}`)).toEqual([id]);
    // A score's first row is marked as its id's first, a correction's row not (the two rows of
    // one insert are one row once stored: the correction).
    const other = (await postScores(ctx, tenant, { name: 'fresh-alone', value: 0.5, traceId: from })).json().data.ids[0] as string;
    await ctx.scoreWriter.settled();
    const marks = await ctx.clickhouse.query({
      query: 'SELECT id, name, fresh_id FROM scores WHERE workspace_id = {w:String} AND id IN ({ids:Array(String)}) ORDER BY name',
      query_params: { w: tenant.workspaceId, ids: [id, other] },
      format: 'JSONEachRow',
    });
    expect(await marks.json()).toEqual([
      { id: other, name: 'fresh-alone', fresh_id: 1 },
      { id, name: 'fresh-to', fresh_id: 0 },
    ]);

    // A second correction in a later flush moves it again: the stored rows are found.
    expect((await postScores(ctx, tenant, { id, name: 'fresh-later', value: 0.9, traceId: later })).statusCode).toBe(200);
    expect(await ids(`traceId=${to}`)).toEqual([]);
    expect(await ids('name=fresh-to')).toEqual([]);
    expect(await ids(`traceId=${later}`)).toEqual([id]);
    const stats = (await getJson(ctx, tenant, '/api/scores/analytics')).json().data.scores as { name: string; count: number }[];
    expect(stats.filter((s) => s.name.startsWith('fresh-')).map((s) => [s.name, s.count])).toEqual([
      ['fresh-alone', 1],
      ['fresh-later', 1],
    ]);
  });
});
