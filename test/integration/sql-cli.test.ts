import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTable, parseParameters } from '../../src/sql/cli.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { loadSqlFixtures } from './sql-fixtures.js';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/loupe.js', import.meta.url));

let ctx: TestContext;
let tenant: Tenant;
let baseUrl: string;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  await loadSqlFixtures(ctx, tenant, await ctx.tenant());
  // A port of the range kept for this suite, the first one free.
  for (let port = 3420; ; port++) {
    try {
      await ctx.app.listen({ port, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${port}`;
      break;
    } catch (error) {
      if (port >= 3440) throw error;
    }
  }
});
afterAll(async () => {
  await ctx?.close();
});

async function loupeSql(args: string[], key = tenant.key) {
  return run(process.execPath, [bin, 'sql', ...args], {
    env: { ...process.env, LOUPE_URL: baseUrl, LOUPE_API_KEY: key, LOG_LEVEL: 'silent' },
  });
}

describe('npx loupe sql', () => {
  it('prints a table', async () => {
    const { stdout, stderr } = await loupeSql([
      'SELECT trace_id, status FROM traces WHERE trace_id IN {ids:Array(String)} ORDER BY trace_id',
      '--param',
      "ids=['t1','t2']",
    ]);
    expect(stdout).toBe('trace_id | status\n---------+----------\nt1       | completed\nt2       | error\n');
    expect(stderr).toMatch(/^2 rows; read \d+ rows/);
  });

  it('prints CSV with --csv', async () => {
    const { stdout } = await loupeSql(['SELECT trace_id, span_count FROM traces ORDER BY trace_id LIMIT 2', '--csv']);
    expect(stdout).toBe('"trace_id","span_count"\n"t1",3\n"t2",3\n');
  });

  it("prints the service's error and exits 1", async () => {
    const failed = await loupeSql(['SELECT * FROM system.tables']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/^403 FORBIDDEN: Table system\.tables is out of reach/);
    const unauthorized = await loupeSql(['SELECT 1'], 'not-a-key').then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(unauthorized?.stderr).toMatch(/^401 UNAUTHORIZED/);
  });
});

describe('table output', () => {
  it('pads columns, writes non-strings as JSON and cuts long values', () => {
    expect(
      formatTable(
        [{ name: 'a' }, { name: 'map' }],
        [
          ['x', { k: 'v' }],
          ['y'.repeat(70), null],
        ],
      ).split('\n'),
    ).toEqual([
      `a${' '.repeat(59)} | map`,
      `${'-'.repeat(60)}-+-${'-'.repeat(9)}`,
      `x${' '.repeat(59)} | {"k":"v"}`,
      `${'y'.repeat(59)}… | null`,
    ]);
    expect(parseParameters(['a=1', 'b=x=y'])).toEqual({ a: '1', b: 'x=y' });
    expect(() => parseParameters(['nope'])).toThrow(/name=value/);
  });
});
