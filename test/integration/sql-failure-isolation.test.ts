import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { appsWithSettings, loadSqlFixtures, sql } from './sql-fixtures.js';

/**
 * The embedded engine hands the output a failed statement had already formatted to the next
 * statement of its session (docs/engine/leftover-output.md). Every statement has a session to
 * itself and a failed statement's session is closed, so no answer ever carries another's rows:
 * here organization A fails in every way it can while C queries and exports, all at once.
 */
let ctx: TestContext;
let attacker: Tenant;
let victim: Tenant;
const apps = appsWithSettings(() => ctx);
const appWith = (settings: Parameters<typeof apps.with>[0]) => apps.with(settings);

beforeAll(async () => {
  ctx = await createTestContext();
  attacker = await ctx.tenant();
  victim = await ctx.tenant();
  // C's rows are the analytics fixtures; A's are the same trace ids with marker attributes.
  await loadSqlFixtures(ctx, victim, attacker);
  // The apps below have writers of their own: the fixtures must be stored before they read.
  await ctx.writer.settled();
});
afterAll(async () => {
  await apps.close();
  await ctx?.close();
});

/** Statements of A that fail after they started to write output. */
const failingShapes = [
  // Over the result rows limit (422): 8 spans × 10,000 rows.
  { query: 'SELECT trace_id, span_id, name, x FROM spans ARRAY JOIN range(10000) AS x', status: 422 },
  { query: 'SELECT trace_id, span_id, name, x FROM spans ARRAY JOIN range(10000) AS x', format: 'jsonl', status: 422 },
  // A runtime error part-way through (400).
  { query: "SELECT trace_id, throwIf(x = 9000, 'boom') AS t FROM spans ARRAY JOIN range(10000) AS x", status: 400 },
  // Partial output that is itself SQL text: the next statement must never run it.
  {
    query: "SELECT 'SELECT 12345 AS injected_by_A' AS text, throwIf(x = 9000, 'boom') FROM spans ARRAY JOIN range(10000) AS x",
    status: 400,
  },
];

describe('a failed SQL statement', () => {
  it("never puts its output in front of another organization's answers and exports", async () => {
    const app = await appWith({ LOUPE_SQL_MAX_RESULT_ROWS: 20_000, LOUPE_SQL_MAX_CONCURRENT: 4, LOUPE_SQL_MAX_WAIT_MS: 60_000 });
    // C's own answers, asked alone first.
    const ownQuery = { query: "SELECT 'C-own' AS marker, span_id, name FROM spans ORDER BY span_id" };
    const ownExport = { query: 'SELECT span_id, name FROM spans ORDER BY span_id', format: 'jsonl' };
    const ownCsv = { query: 'SELECT span_id, name FROM spans ORDER BY span_id', format: 'csv' };
    const expected = {
      json: (await sql(app, victim, ownQuery)).json().data,
      jsonl: (await sql(app, victim, ownExport)).body,
      csv: (await sql(app, victim, ownCsv)).body,
    };
    expect(expected.json.rows.length).toBeGreaterThan(0);
    expect(expected.jsonl).not.toContain('intruder');

    // Each round sends A's failing shapes and C's query and exports at once.
    for (let round = 0; round < 12; round++) {
      const attacks = failingShapes.map(({ status, ...body }) =>
        sql(app, attacker, body).then((res) => {
          expect(res.statusCode, res.body.slice(0, 300)).toBe(status);
        }),
      );
      const answers = [
        sql(app, victim, ownQuery).then((res) => {
          expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
          expect(res.json().data).toEqual(expected.json);
        }),
        sql(app, victim, ownExport).then((res) => {
          expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
          expect(res.body).toBe(expected.jsonl);
        }),
        sql(app, victim, ownCsv).then((res) => {
          expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
          expect(res.body).toBe(expected.csv);
        }),
      ];
      await Promise.all([...attacks, ...answers]);
    }
  });

  it('leaves the next statement of the same organization its own answer', async () => {
    const app = await appWith({ LOUPE_SQL_MAX_RESULT_ROWS: 20_000 });
    for (const shape of failingShapes) {
      const { status, ...body } = shape;
      expect((await sql(app, attacker, body)).statusCode).toBe(status);
      const next = await sql(app, attacker, { query: "SELECT 'B-own' AS v" });
      expect(next.statusCode, next.body.slice(0, 300)).toBe(200);
      expect(next.json().data.rows).toEqual([['B-own']]);
    }
  });
});

describe("the service's own sessions", () => {
  it('answer the statement after a failed one with its own output', async () => {
    const failing = ctx.clickhouse.query({
      query: "SELECT throwIf(number = 200000, 'boom') AS x FROM numbers(300000)",
      format: 'JSONEachRow',
    });
    await expect(failing).rejects.toThrow(/boom/);
    const next = await ctx.clickhouse.query({ query: "SELECT 'B-own' AS v", format: 'JSONEachRow' });
    expect(await next.json()).toEqual([{ v: 'B-own' }]);
    const writer = ctx.writeClient.query({
      query: "SELECT throwIf(number = 200000, 'boom') AS x FROM numbers(300000)",
      format: 'JSONEachRow',
    });
    await expect(writer).rejects.toThrow(/boom/);
    const afterWriter = await ctx.writeClient.query({ query: "SELECT 'W-own' AS v", format: 'JSONEachRow' });
    expect(await afterWriter.json()).toEqual([{ v: 'W-own' }]);
  });
});

describe('SQL queries of several organizations', () => {
  it("answer one organization's short query while another holds its places with long ones", async () => {
    const app = await appWith({ LOUPE_SQL_MAX_CONCURRENT: 2, LOUPE_SQL_MAX_RUNNING: 3, LOUPE_SQL_MAX_WAIT_MS: 30_000 });
    const finished: string[] = [];
    // 8 spans × 0.25 s: two seconds each.
    const slow = { query: 'SELECT sum(sleepEachRow(0.25)) FROM spans' };
    const long = [1, 2, 3].map((n) =>
      sql(app, attacker, slow).then((res) => {
        expect(res.statusCode, res.body).toBe(200);
        finished.push(`A${n}`);
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const short = sql(app, victim, { query: 'SELECT count() FROM spans' }).then((res) => {
      expect(res.statusCode, res.body).toBe(200);
      finished.push('C');
    });
    await Promise.all([...long, short]);
    expect(finished[0]).toBe('C');
  });

  it('waits for a place within LOUPE_SQL_MAX_WAIT_MS, then answers 429 with Retry-After', async () => {
    const app = await appWith({ LOUPE_SQL_MAX_CONCURRENT: 1, LOUPE_SQL_MAX_WAIT_MS: 100 });
    const slow = { query: 'SELECT sum(sleepEachRow(0.1)) FROM spans' };
    const answers = await Promise.all([sql(app, attacker, slow), sql(app, attacker, slow), sql(app, victim, { query: 'SELECT 1' })]);
    expect(answers.map((a) => a.statusCode)).toEqual(expect.arrayContaining([200, 429]));
    expect(answers[2].statusCode).toBe(200);
    const refused = answers.find((a) => a.statusCode === 429)!;
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    expect(refused.json().error.details).toMatchObject({ limit: 'concurrency', variable: 'LOUPE_SQL_MAX_CONCURRENT', value: 1 });
    expect(refused.headers['retry-after']).toBe('1');
    const patient = await appWith({ LOUPE_SQL_MAX_CONCURRENT: 1, LOUPE_SQL_MAX_WAIT_MS: 30_000 });
    const both = await Promise.all([sql(patient, attacker, slow), sql(patient, attacker, slow)]);
    expect(both.map((a) => a.statusCode)).toEqual([200, 200]);
  });

  it('stops the engine’s work when the client goes away', async () => {
    const app = await appWith({ LOUPE_SQL_MAX_EXECUTION_MS: 120_000, LOUPE_SQL_MAX_CONCURRENT: 1 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const heavy = JSON.stringify({
      // A cross join streams: minutes of hashing in little memory (an ARRAY JOIN of ranges
      // materializes its rows and can meet the memory limit first).
      query:
        'SELECT count() FROM spans AS s1, spans AS s2, spans AS s3, spans AS s4, spans AS s5, spans AS s6, spans AS s7, spans AS s8, spans AS s9, spans AS s10 ' +
        'WHERE sipHash64(s1.span_id, s2.span_id, s3.span_id, s4.span_id, s5.span_id, s6.span_id, s7.span_id, s8.span_id, s9.span_id, s10.span_id) % 7 = 1',
    });
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/sql',
      headers: { ...attacker.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(heavy) },
    });
    request.on('error', () => undefined);
    let answered = '';
    request.on('response', (res) => {
      res.on('data', (chunk: Buffer) => (answered += chunk.toString()));
    });
    request.end(heavy);
    const running = async () => {
      const rs = await ctx.clickhouse.query({
        query: "SELECT count() AS n FROM system.processes WHERE startsWith(Settings['log_comment'], 'loupe-sql ')",
        format: 'JSONEachRow',
      });
      return Number((await rs.json<{ n: number }>())[0]?.n ?? 0);
    };
    await expect.poll(running, { timeout: 10_000, interval: 50 }).toBe(1);
    expect(answered).toBe('');
    request.destroy();
    await expect.poll(running, { timeout: 10_000, interval: 100 }).toBe(0);
    // Its place is free again at once.
    const next = await sql(app, attacker, { query: 'SELECT 1' });
    expect(next.statusCode).toBe(200);
  });
});
