import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { connectPostgres, migratePostgres, type Sql } from '../../src/stores/postgres.js';
import { migrateClickhouse, openClickhouse, type ClickHouseClient } from '../../src/stores/clickhouse.js';

export interface TestStores {
  sql: Sql;
  clickhouse: ClickHouseClient;
  /** The client ingestion writes through, as the server has it (a session of its own in the embedded engine). */
  writeClient: ClickHouseClient;
  config: Config;
  postgresUrl: string;
  close(): Promise<void>;
}

/** One directory per test process (the embedded engine binds one per process), inside the run's scratch directory. */
export const embeddedClickhouseDir = path.join(inject('scratchDir'), `ch-${process.pid}`);

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * A fresh PostgreSQL database and a fresh ClickHouse database for one test file, migrated
 * with the service's own migrations, dropped again by `close`.
 */
export async function openTestStores(env: Record<string, string> = {}): Promise<TestStores> {
  const name = `loupe_t_${randomBytes(5).toString('hex')}`;
  const adminUrl = inject('postgresUrl');
  const admin = connectPostgres(adminUrl, { max: 1 });
  await admin.unsafe(`create database ${name}`);
  const postgresUrl = withDatabase(adminUrl, name);
  const sql = connectPostgres(postgresUrl);

  const clickhouseUrl = inject('clickhouseUrl') || undefined;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    CLICKHOUSE_DATABASE: name,
    LOUPE_ADMIN_TOKEN: 'test-admin-token-0123456789',
    LOUPE_DATA_DIR: embeddedClickhouseDir,
    ...(clickhouseUrl ? { CLICKHOUSE_URL: clickhouseUrl } : {}),
    ...env,
  });
  mkdirSync(embeddedClickhouseDir, { recursive: true });
  const ch = await openClickhouse({
    url: clickhouseUrl,
    database: name,
    dataDir: embeddedClickhouseDir,
    readNice: config.LOUPE_REQUEST_NICE,
  });
  await migratePostgres(sql, async () => {
    await migrateClickhouse(ch.client, { database: name, cluster: undefined, retentionDays: config.LOUPE_RETENTION_DAYS });
  });
  return {
    sql,
    clickhouse: ch.client,
    writeClient: ch.writeClient,
    config,
    postgresUrl,
    close: async () => {
      await ch.client.command({ query: `DROP DATABASE IF EXISTS ${name}` }).catch(() => {});
      await ch.close();
      await sql.end({ timeout: 5 });
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
    },
  };
}
