import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { storeTraces, traceIngestOf } from '../../src/traces/ingest/ingest.js';
import { listTraces } from '../../src/traces/query/list.js';
import { defaultQueryLimits } from '../../src/traces/model/query-limits.js';
import type { Trace } from '../../src/traces/model/schemas.js';
import { getUser } from '../../src/traces/query/sessions.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import { embeddedClickhouseDir } from '../support/stores.js';
import { migrationWindow, oneSpanTrace } from './traces-migration-fixtures.js';

/**
 * Migration 0011 on a store written before it: reads filtered on one user now take their
 * candidate traces from `user_traces`, so the traces stored before the table existed must be
 * found there, and a trace moved to another user before it must not be counted twice.
 */

const workspaceId = 'ws-migration-0011';
const database = `loupe_m_${randomBytes(5).toString('hex')}`;
let store: ClickhouseStore;

const trace = (traceId: string, userId: string, minute: number): Trace => oneSpanTrace(traceId, minute, { userId });

const window = migrationWindow;
const listed = async (userId: string) =>
  (await listTraces(store.client, workspaceId, { userId, limit: 20, offset: 0 })).items.map((t) => t.traceId);

beforeAll(async () => {
  store = await openClickhouse({ database, dataDir: embeddedClickhouseDir });
  const ddl = { database, cluster: undefined, retentionDays: undefined };
  expect(await migrateClickhouse(store.client, ddl, 10)).toContain('0010_genai_log_record_tombstones.sql');
  const writer = new WriteBatcher(store.client);
  await storeTraces(traceIngestOf(writer), workspaceId, [trace('t-1', 'u-a', 0), trace('t-2', 'u-a', 1), trace('t-3', 'u-b', 2)]);
  // t-2 moves to u-b before the migration: its older summary row still names u-a until merged.
  await storeTraces(traceIngestOf(writer), workspaceId, [trace('t-2', 'u-b', 1)]);
  expect(await migrateClickhouse(store.client, ddl)).toContain('0011_user_traces.sql');
});

afterAll(async () => {
  await store.client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await store.close();
});

describe('migration 0011 on summaries stored before it', () => {
  it('finds the traces each user had, the moved one under its current user only', async () => {
    expect(await listed('u-a')).toEqual(['t-1']);
    expect(await listed('u-b')).toEqual(['t-3', 't-2']);
    expect(await getUser(store.client, workspaceId, 'u-b', window, defaultQueryLimits)).toMatchObject({ traceCount: 2 });
  });

  it('keeps the candidates in step afterwards: a new trace, a move back', async () => {
    const writer = new WriteBatcher(store.client);
    await storeTraces(traceIngestOf(writer), workspaceId, [trace('t-4', 'u-a', 3), trace('t-2', 'u-a', 1)]);
    expect(await listed('u-a')).toEqual(['t-4', 't-2', 't-1']);
    expect(await listed('u-b')).toEqual(['t-3']);
  });
});
