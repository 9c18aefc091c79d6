import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { prepareStores, type Stores } from '../../src/server.js';
import { connectPostgres, type Sql } from '../../src/stores/postgres.js';
import { openTestStores, withDatabase, type TestStores } from '../support/stores.js';

/** Two replicas starting together on an empty database: one bootstrap, no failed start. */

let stores: TestStores;
let admin: Sql;
const database = `loupe_b_${randomBytes(5).toString('hex')}`;
beforeAll(async () => {
  stores = await openTestStores(); // its ClickHouse database; PostgreSQL is the empty one below
  admin = connectPostgres(inject('postgresUrl'), { max: 1 });
  await admin.unsafe(`create database ${database}`);
});
afterAll(async () => {
  await admin.unsafe(`drop database if exists ${database} with (force)`).catch(() => {});
  await admin.end({ timeout: 5 });
  await stores.close();
});

it('bootstraps the default organization, workspace and key once when two instances start at once', async () => {
  const url = withDatabase(inject('postgresUrl'), database);
  const replicas = [connectPostgres(url), connectPostgres(url)];
  try {
    const starts = replicas.map((sql) =>
      prepareStores(stores.config, {
        postgres: { sql, url, embedded: false, close: async () => {} },
        clickhouse: { client: stores.clickhouse, embedded: false, close: async () => {} },
        close: async () => {},
      } as unknown as Stores),
    );
    const results = await Promise.all(starts);
    expect(results.map((r) => r.first.kind).sort()).toEqual(['generated', 'none']);
    const sql = replicas[0]!;
    expect(await sql`select count(*)::int as n from organizations where name = 'default'`).toEqual([{ n: 1 }]);
    expect(await sql`select count(*)::int as n from workspaces`).toEqual([{ n: 1 }]);
    expect(await sql`select count(*)::int as n from api_keys`).toEqual([{ n: 1 }]);
  } finally {
    await Promise.all(replicas.map((sql) => sql.end({ timeout: 5 })));
  }
});
