import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { connectPostgres, migratePostgres, type Sql } from '../../src/stores/postgres.js';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { selectTraceWithSpans } from '../../src/traces/tables/traces-table.js';
import { embeddedClickhouseDir, withDatabase } from '../support/stores.js';

const name = `loupe_m_${randomBytes(5).toString('hex')}`;
let admin: Sql;
let a: Sql;
let b: Sql;
let ch: ClickhouseStore;

beforeAll(async () => {
  admin = connectPostgres(inject('postgresUrl'), { max: 1 });
  await admin.unsafe(`create database ${name}`);
  a = connectPostgres(withDatabase(inject('postgresUrl'), name));
  b = connectPostgres(withDatabase(inject('postgresUrl'), name));
  ch = await openClickhouse({ url: inject('clickhouseUrl') || undefined, database: name, dataDir: embeddedClickhouseDir });
});
afterAll(async () => {
  await ch.client.command({ query: `DROP DATABASE IF EXISTS ${name}` });
  await ch.close();
  await a.end();
  await b.end();
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

const files = (dir: string) =>
  readdirSync(new URL(`../../${dir}/`, import.meta.url))
    .filter((f) => /^\d{4}_.*\.sql$/.test(f))
    .sort();

describe('migrations', () => {
  it('two instances starting at once apply every file exactly once, in both stores', async () => {
    const ddl = { database: name, cluster: undefined, retentionDays: undefined };
    const results = await Promise.all(
      [a, b].map(async (sql) => {
        let clickhouse: string[] = [];
        const postgres = await migratePostgres(sql, async () => {
          clickhouse = await migrateClickhouse(ch.client, ddl);
        });
        return { postgres, clickhouse };
      }),
    );
    // One instance applied everything, the other found nothing left to do.
    const postgresApplied = results.flatMap((r) => r.postgres).sort();
    const clickhouseApplied = results.flatMap((r) => r.clickhouse).sort();
    expect(postgresApplied).toEqual(files('postgres'));
    expect(clickhouseApplied).toEqual(files('clickhouse'));

    const rows = await a<{ name: string }[]>`select name from schema_migrations order by version`;
    expect(rows.map((r) => r.name)).toEqual(files('postgres'));
    const chRows = await ch.client.query({ query: 'SELECT name FROM schema_migrations ORDER BY version', format: 'JSONEachRow' });
    expect((await chRows.json<{ name: string }>()).map((r) => r.name)).toEqual(files('clickhouse'));

    // A later start applies nothing.
    expect(
      await migratePostgres(a, async () => {
        expect(await migrateClickhouse(ch.client, ddl)).toEqual([]);
      }),
    ).toEqual([]);
  });
});

describe('the ClickHouse connection', () => {
  it('resolves unqualified table names in the configured database, embedded or server', async () => {
    const current = await ch.client.query({ query: 'SELECT currentDatabase() AS db', format: 'JSONEachRow' });
    expect(await current.json()).toEqual([{ db: name }]);
    const tables = await ch.client.query({
      query: "SELECT name FROM system.tables WHERE database = {db:String} AND name IN ('spans', 'traces') ORDER BY name",
      query_params: { db: name },
      format: 'JSONEachRow',
    });
    expect((await tables.json<{ name: string }>()).map((t) => t.name)).toEqual(['spans', 'traces']);
  });

  it("runs every statement with the shared settings, and keeps a key read's max_threads to that read", async () => {
    const settings = async () => {
      const result = await ch.client.query({
        query: `SELECT getSetting('output_format_json_quote_64bit_integers') AS quote64, getSetting('output_format_json_quote_denormals') AS denormals,
                  getSetting('insert_distributed_sync') AS distributedSync, getSetting('max_threads') AS maxThreads`,
        format: 'JSONEachRow',
      });
      return (await result.json<Record<string, unknown>>())[0]!;
    };
    const before = await settings();
    expect(before).toMatchObject({ quote64: false, denormals: false, distributedSync: true });
    await selectTraceWithSpans(ch.client, { workspaceId: 'no-workspace', traceId: 'no-trace' });
    expect(await settings()).toEqual(before);
    expect(before.maxThreads).not.toBe(1);
  });
});
