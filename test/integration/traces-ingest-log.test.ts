import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger, openWriter } from '../../src/server.js';
import { IngestLog } from '../../src/traces/writer/ingest-log.js';
import { linesOf } from '../../src/traces/writer/flush.js';
import { toSpanRows } from '../../src/traces/ingest/ingest.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

let ctx: TestContext;
let tenant: Tenant;
const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-log-test-'));
  dirs.push(dir);
  return dir;
};
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const start = Date.parse('2026-06-01T10:00:00Z');
function trace(traceId: string, spans = 2) {
  return {
    traceId,
    source: 'sdk',
    sessionId: `session-${traceId}`,
    spans: Array.from({ length: spans }, (_, i) => ({
      spanId: `s${i}`,
      ...(i > 0 ? { parentSpanId: 's0' } : {}),
      name: `step ${i}`,
      kind: i === 0 ? 'agent' : 'llm.chat',
      startTime: new Date(start + i).toISOString(),
      endTime: new Date(start + i + 10).toISOString(),
      durationMs: 10,
      status: 'ok',
      ...(i > 0 ? { model: 'm', inputTokens: 2, outputTokens: 1, totalTokens: 3, costUsd: 0.25 } : {}),
    })),
  };
}
const rowsOf = (workspaceId: string, traceId: string, spans = 2) => toSpanRows(workspaceId, [trace(traceId, spans) as never]);
const until = async (check: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return check();
};
const detail = (traceId: string) => ctx.app.inject({ method: 'GET', url: `/api/traces/${traceId}`, headers: tenant.headers });

describe('the ingest write-ahead log', () => {
  it('answers a write once logged, keeps it while the store is down, and a new process applies it', async () => {
    const dir = newDir();
    // A real client whose server does not answer: the store is down, nothing is faked.
    const down = createClient({ url: 'http://127.0.0.1:9', request_timeout: 2_000, log: { level: ClickHouseLogLevel.OFF } });
    const writer = new WriteBatcher(down, { log: IngestLog.open(dir).log, maxBacklogRows: 6 });
    const w = tenant.workspaceId;
    await writer.write(w, rowsOf(w, 'wal-1'), ['wal-1']);
    await writer.write(w, rowsOf(w, 'wal-2', 3), ['wal-2']);
    await writer.write(w, rowsOf(w, 'wal-1', 4), ['wal-1']);
    expect(await until(() => writer.counts.retries > 0)).toBe(true);
    // Reads of the workspace cannot see the answered writes: they hear 503, not a stale answer.
    await expect(writer.readable(w)).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    await expect(writer.readable(w, ['wal-2'])).rejects.toMatchObject({ status: 503 });
    // Nor the list, which would lay them over the store: it hears the same.
    expect(() => writer.unapplied(w)).toThrow(expect.objectContaining({ status: 503 }));
    // Another workspace, or a trace with nothing pending, does not wait.
    expect(writer.readable('another-workspace')).toBeUndefined();
    expect(writer.readable(w, ['no-such-trace'])).toBeUndefined();
    // The backlog is full (9 rows against 6) and the store down: a new write is refused, not queued.
    await expect(writer.write(w, rowsOf(w, 'wal-3'), ['wal-3'])).rejects.toMatchObject({ status: 503 });
    expect(await writer.close(200)).toBe(false);
    await down.close();

    const { log, recovered } = IngestLog.open(dir);
    expect(recovered.damagedLines).toBe(0);
    expect(recovered.writes.map((x) => [x.seq, x.traceIds, x.rows.length])).toEqual([
      [1, ['wal-1'], 2],
      [2, ['wal-2'], 3],
      [3, ['wal-1'], 4],
    ]);
    const again = new WriteBatcher(ctx.writeClient, { log });
    again.replay(recovered.writes);
    await again.settled();
    // Applied in order: the later payload of wal-1 replaced the first.
    expect((await detail('wal-1')).json().data).toMatchObject({ spanCount: 4, sessionId: 'session-wal-1', costUsd: 0.75 });
    expect((await detail('wal-2')).json().data).toMatchObject({ spanCount: 3, costUsd: 0.5 });
    expect((await detail('wal-3')).statusCode).toBe(404);
    // Once applied and closed, the log is empty; a new number continues after the last.
    expect(await again.close()).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.log'))).toEqual([]);
  });

  it('makes a read wait for the writes answered before it, and a one-trace read only for that trace', async () => {
    const w = tenant.workspaceId;
    const writer = new WriteBatcher(ctx.writeClient, { log: IngestLog.open(newDir()).log, minFlushIntervalMs: 60_000 });
    // The first write flushes at once; the next waits for the (long) interval between flushes.
    await writer.write(w, rowsOf(w, 'rw-1'), ['rw-1']);
    await writer.settled();
    await writer.write(w, rowsOf(w, 'rw-2'), ['rw-2']);
    expect(writer.readable(w, ['rw-1'])).toBeUndefined();
    const waiting = writer.readable(w);
    expect(waiting).toBeInstanceOf(Promise);
    // The waiting read cuts the interval short: it does not wait a minute.
    const started = Date.now();
    await waiting;
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await detail('rw-2')).statusCode).toBe(200);
    expect(writer.readable(w)).toBeUndefined();
    await writer.close();
  });

  it('applies writes in the order they were answered, whatever order their rows were built in', async () => {
    const w = tenant.workspaceId;
    const writer = new WriteBatcher(ctx.writeClient, { log: IngestLog.open(newDir()).log });
    // The second write's rows are built first, so they carry the older version.
    const later = toSpanRows(w, [{ ...trace('order-1', 3), sessionId: 'moved', name: 'second' } as never]);
    const earlier = toSpanRows(w, [{ ...trace('order-1', 2), name: 'first' } as never]);
    await writer.write(w, earlier, ['order-1']);
    await writer.settled();
    await writer.write(w, later, ['order-1']);
    await writer.settled();
    expect((await detail('order-1')).json().data).toMatchObject({ name: 'second', sessionId: 'moved', spanCount: 3 });
    await writer.close();
  });

  it("writes a line from the rows' own encodings exactly as from the rows, and reads it back", async () => {
    const w = tenant.workspaceId;
    // Text that JSON escapes, and a row of every field type.
    const rows = toSpanRows(w, [{ ...trace('text-1', 3), name: 'quote " slash \\ line\n tab\t é 😀', tags: ['a', 'b'] } as never]);
    const lines: string[] = [];
    for (const rowLines of [undefined, linesOf(rows.map((row) => JSON.stringify(row)))]) {
      const dir = newDir();
      const log = IngestLog.open(dir).log;
      await log.append({ workspaceId: w, traceIds: ['text-1'], rows }, rowLines).durable;
      await log.close(false);
      lines.push(
        readdirSync(dir)
          .map((f) => readFileSync(path.join(dir, f), 'utf8'))
          .join(''),
      );
      const reopened = IngestLog.open(dir);
      expect(reopened.recovered.writes).toEqual([{ seq: 1, workspaceId: w, traceIds: ['text-1'], rows }]);
      await reopened.log.close(false);
    }
    expect(lines[1]).toBe(lines[0]);
  });

  it('refuses to start on a log folder it cannot use, naming the setting', () => {
    const file = path.join(newDir(), 'not-a-folder');
    writeFileSync(file, '');
    const config = loadConfig({ LOUPE_INGEST_LOG_DIR: path.join(file, 'log'), LOG_LEVEL: 'silent' });
    expect(() => openWriter(config, ctx.writeClient, createLogger(config))).toThrow(
      `Cannot open the ingest log in ${path.join(file, 'log')} (ENOTDIR): set LOUPE_INGEST_LOG_DIR to a writable folder on local disk`,
    );
  });

  it('skips a line torn by a crash, which was never answered, and reads the rest', async () => {
    const dir = newDir();
    const first = IngestLog.open(dir).log;
    const w = tenant.workspaceId;
    await first.append({ workspaceId: w, traceIds: ['torn-1'], rows: rowsOf(w, 'torn-1') }).durable;
    await first.append({ workspaceId: w, traceIds: ['torn-2'], rows: rowsOf(w, 'torn-2') }).durable;
    await first.close(false);
    const [segment] = readdirSync(dir);
    appendFileSync(path.join(dir, segment!), '0badc0de [3,"w",["torn-3"],[{"trace_id":"torn');
    const { log, recovered } = IngestLog.open(dir);
    expect(recovered.damagedLines).toBe(1);
    expect(recovered.writes.map((x) => x.traceIds[0])).toEqual(['torn-1', 'torn-2']);
    // Numbers go on after the last write read, in a new segment (no answered line after a torn one).
    const next = log.append({ workspaceId: w, traceIds: ['torn-4'], rows: [] });
    expect(next.seq).toBe(3);
    await next.durable;
    expect(readdirSync(dir).filter((f) => f.endsWith('.log'))).toHaveLength(2);
    await log.close(false);
  });

  it('deletes the segments whose writes were all applied, while writes go on', async () => {
    const dir = newDir();
    const writer = new WriteBatcher(ctx.writeClient, { log: IngestLog.open(dir, { segmentBytes: 1 }).log });
    const w = tenant.workspaceId;
    for (let round = 0; round < 5; round++) {
      await Promise.all(Array.from({ length: 4 }, (_, i) => writer.write(w, rowsOf(w, `seg-${round}-${i}`), [`seg-${round}-${i}`])));
      await writer.settled();
      // Applied, so at most the segment still open remains.
      expect(readdirSync(dir).filter((f) => f.endsWith('.log')).length).toBeLessThanOrEqual(1);
    }
    expect(writer.log!.counts.appends).toBe(20);
    expect(writer.log!.counts.syncs).toBeLessThanOrEqual(20);
    expect((await detail('seg-4-3')).statusCode).toBe(200);
    await writer.close();
  });
});

describe('every read of trace data waits for the writes answered before it', () => {
  let slow: TestContext;
  let t: Tenant;
  beforeAll(async () => {
    // Flushes at most once a minute unless a read waits: a read that did not wait would not
    // see a write answered just before it.
    slow = await createTestContext({ writer: { minFlushIntervalMs: 60_000 } });
    t = await slow.tenant();
    // The first write finds the writer idle and is flushed at once; the next ones wait.
    await send('barrier-first');
  });
  afterAll(async () => {
    await slow?.close();
  });
  const day = 'startAfter=2026-06-01T00:00:00Z&startBefore=2026-06-02T00:00:00Z';
  async function send(traceId: string, extra: Record<string, unknown> = {}) {
    const body = { traces: [{ ...trace(traceId, 3), userId: `user-${traceId}`, ...extra }] };
    const res = await slow.app.inject({ method: 'POST', url: '/api/traces', headers: t.headers, payload: body });
    expect(res.json().data).toMatchObject({ accepted: 1 });
  }
  const read = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => {
    const res = await slow.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
    return res.json().data;
  };
  const ids = (items: Array<{ traceId: string }>) => items.map((x) => x.traceId);

  it.each([
    ['GET /api/traces', async (id: string) => expect(ids(await read('GET', '/api/traces?limit=100'))).toContain(id)],
    ['GET /api/traces/:id', async (id: string) => expect(await read('GET', `/api/traces/${id}`)).toMatchObject({ spanCount: 3 })],
    ['GET /api/traces/:id/tree', async (id: string) => expect((await read('GET', `/api/traces/${id}/tree`)).spans).toHaveLength(3)],
    [
      'GET /api/traces/:id/spans/:spanId',
      async (id: string) => expect(await read('GET', `/api/traces/${id}/spans/s2`)).toMatchObject({ spanId: 's2' }),
    ],
    [
      'DELETE /api/traces/:id',
      async (id: string) => expect(await read('DELETE', `/api/traces/${id}`)).toEqual({ traceId: id, deleted: true }),
    ],
    [
      'GET /api/traces/stats',
      async (id: string) =>
        expect(
          (await read('GET', `/api/traces/stats?groupBy=user&from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z`)).groups,
        ).toContainEqual(expect.objectContaining({ key: `user-${id}` })),
    ],
    [
      'GET /api/sessions',
      async (id: string) =>
        expect((await read('GET', `/api/sessions?${day}&limit=100`)).map((s: { sessionId: string }) => s.sessionId)).toContain(
          `session-${id}`,
        ),
    ],
    [
      'GET /api/sessions/:sessionId',
      async (id: string) => expect(ids((await read('GET', `/api/sessions/session-${id}?${day}`)).traces)).toEqual([id]),
    ],
    [
      'GET /api/users',
      async (id: string) =>
        expect((await read('GET', `/api/users?${day}&limit=100`)).map((u: { userId: string }) => u.userId)).toContain(`user-${id}`),
    ],
    [
      'GET /api/users/:userId',
      async (id: string) => expect(await read('GET', `/api/users/user-${id}?${day}`)).toMatchObject({ traceCount: 1 }),
    ],
    [
      'POST /api/sql',
      async (id: string) =>
        expect((await read('POST', '/api/sql', { query: `SELECT count() AS n FROM traces WHERE trace_id = '${id}'` })).rows).toEqual([[1]]),
    ],
  ])('%s', async (_route, check) => {
    const id = `barrier-${_route.replace(/[^a-z]+/gi, '-').toLowerCase()}`;
    await send(id);
    await check(id);
  });
});
