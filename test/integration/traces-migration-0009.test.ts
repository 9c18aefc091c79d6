import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { storeTraces, traceIngestOf } from '../../src/traces/ingest/ingest.js';
import { defaultQueryLimits } from '../../src/traces/model/query-limits.js';
import { deleteTrace } from '../../src/traces/query/read.js';
import { getSession } from '../../src/traces/query/sessions.js';
import type { Trace } from '../../src/traces/model/schemas.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import { embeddedClickhouseDir } from '../support/stores.js';
import { migrationWindow, oneSpanTrace } from './traces-migration-fixtures.js';

/**
 * Migration 0009 on a store written before it: a session's page, now read from
 * `session_traces`, must show what the trace summaries said, including traces moved to another
 * session and traces deleted before the table existed (tombstones then carried no session).
 */

const workspaceId = 'ws-migration-0009';
const database = `loupe_m_${randomBytes(5).toString('hex')}`;
let store: ClickhouseStore;

const trace = (traceId: string, sessionId: string | undefined, minute: number): Trace =>
  oneSpanTrace(traceId, minute, sessionId ? { sessionId } : {});

const window = { ...migrationWindow, limit: 20 };
const open = async (sessionId: string) => {
  const { session } = await getSession(store.client, workspaceId, sessionId, window, defaultQueryLimits);
  return { traceCount: session.traceCount, traces: session.traces.map((t) => t.traceId) };
};

beforeAll(async () => {
  store = await openClickhouse({ database, dataDir: embeddedClickhouseDir });
  const ddl = { database, cluster: undefined, retentionDays: undefined };
  expect(await migrateClickhouse(store.client, ddl, 8)).toContain('0008_attribute_maps_and_sql_views.sql');
  await storeTraces(traceIngestOf(new WriteBatcher(store.client)), workspaceId, [
    trace('t-kept', 's-1', 0),
    trace('t-moved', 's-1', 1),
    trace('t-deleted', 's-1', 2),
    trace('t-alone', undefined, 3),
  ]);
  // What the service did before 0009: a move is a newer summary row under the new session; a
  // delete a tombstone without the session.
  await store.client.command({
    query: `INSERT INTO traces SELECT * REPLACE ('s-2' AS session_id, version + 1 AS version) FROM traces FINAL
            WHERE workspace_id = {w:String} AND trace_id = 't-moved'`,
    query_params: { w: workspaceId },
  });
  await store.client.command({
    query: `INSERT INTO traces (workspace_id, trace_id, start_time, span_count, error_count, version, is_deleted)
            SELECT workspace_id, trace_id, start_time, 0, 0, version + 1, 1 FROM traces FINAL
            WHERE workspace_id = {w:String} AND trace_id = 't-deleted'`,
    query_params: { w: workspaceId },
  });
  expect(await migrateClickhouse(store.client, ddl)).toContain('0009_session_traces.sql');
});

afterAll(async () => {
  await store.client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await store.close();
});

describe('migration 0009 on summaries of the earlier schema', () => {
  it('opens each session with the traces its summaries name: moved and deleted traces leave it', async () => {
    expect(await open('s-1')).toEqual({ traceCount: 1, traces: ['t-kept'] });
    expect(await open('s-2')).toEqual({ traceCount: 1, traces: ['t-moved'] });
  });

  it('copies only the live rows with a session', async () => {
    const result = await store.client.query({
      query: 'SELECT session_id, trace_id, is_deleted FROM session_traces WHERE workspace_id = {w:String} ORDER BY session_id, trace_id',
      query_params: { w: workspaceId },
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([
      { session_id: 's-1', trace_id: 't-kept', is_deleted: 0 },
      { session_id: 's-2', trace_id: 't-moved', is_deleted: 0 },
    ]);
  });

  it('keeps the copy in step afterwards: a move back, a delete', async () => {
    const writer = new WriteBatcher(store.client);
    await storeTraces(traceIngestOf(writer), workspaceId, [trace('t-moved', 's-1', 1)]);
    expect(await open('s-1')).toEqual({ traceCount: 2, traces: ['t-kept', 't-moved'] });
    await expect(open('s-2')).rejects.toMatchObject({ status: 404 });
    await deleteTrace(store.client, workspaceId, 't-kept');
    expect(await open('s-1')).toEqual({ traceCount: 1, traces: ['t-moved'] });
  });
});
