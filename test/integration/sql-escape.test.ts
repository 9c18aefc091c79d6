import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { loadSqlFixtures, sql } from './sql-fixtures.js';

/**
 * Hostile queries: every one is refused with 400 or 403 and a message, or answers only the
 * caller's rows. The other workspace holds the same trace ids with costs of 987654 and the
 * attribute `secret`, so any of its rows in an answer shows in `leaks`.
 */
let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  await loadSqlFixtures(ctx, tenant, other);
});
afterAll(async () => {
  await ctx?.close();
});

type Outcome = { status: number; code?: string; message?: string; body: string };

async function attempt(query: string, parameters?: Record<string, unknown>): Promise<Outcome> {
  const res = await sql(ctx.app, tenant, { query, ...(parameters ? { parameters } : {}) });
  const json = res.json();
  return { status: res.statusCode, code: json.error?.code, message: json.error?.message, body: res.body };
}

/** Nothing of the other workspace: its ids, its costs, its attribute values. */
function expectNoLeak(outcome: Outcome) {
  expect(outcome.status, outcome.body).toBeLessThan(500);
  expect(outcome.body).not.toContain(other.workspaceId);
  expect(outcome.body).not.toContain('other-workspace');
  expect(outcome.body).not.toContain('intruder');
  expect(outcome.body).not.toContain('987654');
}

async function expectRefused(query: string, status: 400 | 403, message: RegExp, parameters?: Record<string, unknown>) {
  const outcome = await attempt(query, parameters);
  expect(outcome.status, `${query}\n${outcome.body}`).toBe(status);
  expect(outcome.message, query).toMatch(message);
  expectNoLeak(outcome);
}

/** The query runs, but sees only the caller's rows. */
async function expectOwnRowsOnly(query: string, parameters?: Record<string, unknown>) {
  const outcome = await attempt(query, parameters);
  expect(outcome.status, `${query}\n${outcome.body}`).toBe(200);
  expectNoLeak(outcome);
  return JSON.parse(outcome.body).data.rows as unknown[][];
}

describe("another workspace's rows", () => {
  it('are not reached by the workspace id, OR 1=1, subqueries, joins, UNION, CTEs or arrayJoin', async () => {
    const ws = other.workspaceId;
    expect(await expectOwnRowsOnly(`SELECT * FROM spans WHERE trace_id = 't1' OR 1=1`)).toHaveLength(8);
    expect(await expectOwnRowsOnly(`SELECT count() FROM traces WHERE 1=1 OR trace_id != ''`)).toEqual([[4]]);
    // The views have no workspace column: naming it is an error (whose message echoes the caller's own text).
    const byId = await attempt(`SELECT * FROM spans WHERE workspace_id = '${ws}'`);
    expect(byId.status).toBe(400);
    expect(byId.message).toMatch(/workspace_id/);
    expect(byId.body).not.toContain('987654');
    await expectOwnRowsOnly(`SELECT * FROM spans WHERE trace_id IN (SELECT trace_id FROM traces WHERE cost_usd > 100)`);
    await expectOwnRowsOnly(`SELECT a.trace_id, b.cost_usd FROM spans a JOIN traces b ON a.trace_id = b.trace_id`);
    await expectOwnRowsOnly(`SELECT a.trace_id, b.cost_usd FROM spans a CROSS JOIN traces b`);
    await expectOwnRowsOnly(
      `SELECT trace_id, cost_usd FROM traces UNION ALL SELECT trace_id, cost_usd FROM spans UNION DISTINCT SELECT 'x', 1`,
    );
    await expectOwnRowsOnly(`WITH spans AS (SELECT * FROM spans WHERE 1) SELECT cost_usd, attributes FROM spans`);
    await expectOwnRowsOnly(`WITH x AS (SELECT * FROM traces), y AS (SELECT * FROM x) SELECT * FROM y`);
    await expectOwnRowsOnly(`SELECT arrayJoin([(SELECT groupArray(cost_usd) FROM spans)]) AS c`);
    await expectOwnRowsOnly(`SELECT arrayJoin(mapValues(attributes)) AS v FROM spans`);
    await expectOwnRowsOnly(`SELECT * FROM (SELECT * FROM (SELECT * FROM (SELECT cost_usd FROM spans)))`);
    expect(await expectOwnRowsOnly('SELECT user_id, cost_usd FROM users ORDER BY user_id')).toEqual([
      ['u-1', 0.5],
      ['u-2', 0.25],
    ]);
    await expectOwnRowsOnly('SELECT s.session_id, u.user_id, u.cost_usd FROM sessions s CROSS JOIN users u');
    await expectOwnRowsOnly(`SELECT (SELECT max(cost_usd) FROM spans) AS m, (SELECT count() FROM traces) AS n`);
    await expectOwnRowsOnly(`SELECT * FROM spans WHERE trace_id = {id:String}`, { id: `t1' OR workspace_id = '${ws}` });
    await expectRefused(`SELECT {__loupe_workspace:String} AS mine`, 400, /__loupe_workspace/);
    await expectRefused(`SELECT * FROM spans FINAL`, 400, /FINAL/); // the views are deduplicated already
  });

  it('are not reached through the parameterized views or the tables behind them', async () => {
    const ws = other.workspaceId;
    await expectRefused(`SELECT * FROM sql_spans(workspace = '${ws}')`, 403, /Table function sql_spans/);
    await expectRefused(`SELECT * FROM ${ctx.config.CLICKHOUSE_DATABASE}.sql_spans(workspace = '${ws}')`, 403, /Table function/);
    await expectRefused(`SELECT * FROM ${ctx.config.CLICKHOUSE_DATABASE}.spans`, 403, /out of reach/);
    await expectRefused(`SELECT * FROM \`${ctx.config.CLICKHOUSE_DATABASE}\`.\`traces\``, 403, /out of reach/);
    await expectRefused(`SELECT * FROM sql_spans`, 400, /./);
    await expectRefused(`SELECT * FROM spans_latest`, 400, /spans_latest/);
    await expectRefused(`SELECT * FROM schema_migrations`, 400, /schema_migrations/);
    await expectRefused(`SELECT 1 FROM spans WHERE trace_id IN ${ctx.config.CLICKHOUSE_DATABASE}.traces`, 403, /out of reach/);
    // An Identifier parameter is substituted before the tree is checked.
    await expectRefused('SELECT * FROM {t:Identifier}', 403, /out of reach/, { t: 'system.tables' });
    await expectRefused('SELECT * FROM {t:Identifier}', 403, /out of reach/, { t: `${ctx.config.CLICKHOUSE_DATABASE}.spans` });
    await expectRefused(`SELECT * FROM merge(${ctx.config.CLICKHOUSE_DATABASE}, '.*')`, 403, /Table function merge/);
  });
});

describe('the rest of the engine', () => {
  it('system tables, table functions and dictionaries are refused', async () => {
    await expectRefused('SELECT * FROM system.tables', 403, /system\.tables is out of reach/);
    await expectRefused('SELECT name FROM system.users', 403, /out of reach/);
    await expectRefused('SELECT * FROM `system`.`databases`', 403, /out of reach/);
    await expectRefused('SELECT * FROM `system.tables`', 403, /out of reach/);
    await expectRefused('SELECT 1 WHERE 1 IN system.numbers', 403, /out of reach/);
    for (const fn of [
      "file('/etc/passwd')",
      "url('http://127.0.0.1:3400/')",
      "s3('http://x/y')",
      "remote('127.0.0.1', system.one)",
      "cluster('default', system.one)",
      'numbers(10)',
      "executable('id', 'TSV', 'x String')",
      "dictionary('d')",
      "input('x String')",
      "mysql('h:1', 'd', 't', 'u', 'p')",
      "postgresql('h:1', 'd', 't', 'u', 'p')",
      'view(SELECT 1)',
    ]) {
      await expectRefused(`SELECT * FROM ${fn}`, 403, /Table function/);
    }
    await expectRefused("SELECT dictGet('d', 'a', 1)", 403, /Function dictGet/);
    await expectRefused("SELECT joinGet('t', 'a', 1)", 403, /Function joinGet/);
    await expectRefused("SELECT file('/etc/passwd')", 403, /Function file/);
    await expectRefused("SELECT hasColumnInTable('system', 'users', 'name')", 403, /hasColumnInTable/);
    await expectRefused("SELECT getSetting('readonly')", 403, /getSetting/);
    await expectRefused('SELECT currentUser(), hostName()', 403, /not allowed/);
    await expectRefused('SELECT * FROM (EXPLAIN SELECT * FROM system.tables)', 403, /not allowed|Table function/);
  });

  it('settings, second statements, writes and DDL are refused', async () => {
    await expectRefused('SELECT * FROM spans SETTINGS readonly = 0', 403, /SETTINGS are not allowed/);
    await expectRefused('SELECT * FROM (SELECT * FROM spans SETTINGS max_rows_to_read = 0)', 403, /SETTINGS/);
    await expectRefused('SET readonly = 0', 403, /Only a SELECT/);
    await expectRefused('SELECT 1; DROP TABLE spans', 400, /Multi-statements/);
    await expectRefused('SELECT 1;\nDROP DATABASE system', 400, /Multi-statements/);
    await expectRefused(`INSERT INTO spans (trace_id) VALUES ('x')`, 403, /Only a SELECT/);
    await expectRefused(`INSERT INTO ${ctx.config.CLICKHOUSE_DATABASE}.spans SELECT * FROM spans`, 403, /Only a SELECT/);
    await expectRefused('ALTER TABLE spans DELETE WHERE 1', 403, /Only a SELECT/);
    await expectRefused('DROP TABLE spans', 403, /Only a SELECT/);
    await expectRefused('CREATE TABLE x (a Int8) ENGINE = Memory', 403, /Only a SELECT/);
    await expectRefused('TRUNCATE TABLE spans', 403, /Only a SELECT/);
    await expectRefused('SYSTEM SHUTDOWN', 403, /Only a SELECT/);
    await expectRefused('KILL QUERY ALL', 400, /./);
    await expectRefused('EXPLAIN SELECT * FROM system.tables', 403, /Only a SELECT/);
    await expectRefused('SHOW TABLES', 403, /Only a SELECT/);
    await expectRefused('DESCRIBE TABLE spans', 403, /Only a SELECT/);
    await expectRefused("SELECT * FROM spans INTO OUTFILE '/tmp/loupe-escape.csv'", 400, /OUTFILE/);
    await expectRefused('SELECT * FROM spans FORMAT Native', 400, /FORMAT/);
  });

  it('comments, odd whitespace, homoglyphs, long and deeply nested queries are handled', async () => {
    await expectOwnRowsOnly('SELECT/**/count()\n\t FROM\u00a0spans -- OR 1=1; DROP TABLE spans');
    await expectRefused('SELECT 1 /* ; */ ; DROP TABLE spans', 400, /Multi-statements/);
    await expectRefused('SELECT * FROM system/**/.tables', 403, /out of reach/);
    await expectRefused('SELECT * FROM system . tables', 403, /out of reach/);
    await expectRefused('SELECT * FROM \u0455ystem.tables', 400, /./); // Cyrillic ѕ
    await expectRefused('SELECT * FROM sp\u0430ns', 400, /./); // Cyrillic а: not the view
    await expectRefused('ՏELECT 1', 400, /./);
    await expectRefused('SELECT * FROM spans\u037e DROP TABLE spans', 400, /./); // Greek question mark
    const long = `SELECT count() FROM spans WHERE ${Array.from({ length: 4000 }, (_, i) => `trace_id != 'x${i}'`).join(' AND ')}`;
    expect(long.length).toBeGreaterThan(60_000);
    await expectOwnRowsOnly(long);
    const tooLong = `SELECT 1 /* ${'x'.repeat(100_001)} */`;
    const res = await attempt(tooLong);
    expect(res.status).toBe(400);
    expect(res.code).toBe('VALIDATION_ERROR');
    await expectRefused(`SELECT ${'('.repeat(3000)}1${')'.repeat(3000)}`, 400, /depth|recursion|deep/i);
    await expectRefused(`${'SELECT * FROM ('.repeat(400)}SELECT cost_usd FROM spans${')'.repeat(400)}`, 400, /depth|recursion|deep/i);
    await expectOwnRowsOnly(`${'SELECT * FROM ('.repeat(40)}SELECT cost_usd FROM spans${')'.repeat(40)}`);
  });
});
