import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { storeTraces, traceIngestOf } from '../../src/traces/ingest/ingest.js';
import { getTrace } from '../../src/traces/query/read.js';
import { selectTraceWithSpans } from '../../src/traces/tables/traces-table.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import { embeddedClickhouseDir } from '../support/stores.js';
import { oneSpanTrace, skipIndexOf } from './traces-migration-fixtures.js';

/**
 * Migration 0012: a bloom filter of trace ids on `spans` and `traces`, so that a read of one
 * trace skips the small parts a steady ingest keeps that do not hold it. Parts written before
 * the migration have no index and are still read; parts written after are skipped.
 */

const workspaceId = 'ws-migration-0012';
const database = `loupe_m_${randomBytes(5).toString('hex')}`;
let store: ClickhouseStore;

/** The engine's plan of a statement with the trace id index: the parts and granules it kept. */
const skipIndexOfTraceId = (query: string, values: Record<string, unknown>) => skipIndexOf(store.client, 'idx_trace_id', query, values);

const spansOfTrace = (traceId: string) => ({
  query: `SELECT detail FROM spans FINAL WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0`,
  values: { workspaceId, traceId },
});

beforeAll(async () => {
  store = await openClickhouse({ database, dataDir: embeddedClickhouseDir });
  const ddl = { database, cluster: undefined, retentionDays: undefined };
  expect(await migrateClickhouse(store.client, ddl, 11)).toContain('0011_user_traces.sql');
  // Each write its own part, kept apart: what an ingest leaves between merges.
  await store.client.command({ query: `SYSTEM STOP MERGES ${database}.spans` });
  await store.client.command({ query: `SYSTEM STOP MERGES ${database}.traces` });
  const writer = new WriteBatcher(store.client);
  // Every part spans the ids from a- to z-, so the primary index keeps them all for m-….
  const write = (id: string, i: number) =>
    storeTraces(traceIngestOf(writer), workspaceId, [oneSpanTrace(`a-${id}`, i), oneSpanTrace(`z-${id}`, i)]);
  for (let i = 0; i < 3; i++) await write(`before-${i}`, i);
  await storeTraces(traceIngestOf(writer), workspaceId, [oneSpanTrace('a-old', 3), oneSpanTrace('m-old', 3), oneSpanTrace('z-old', 3)]);
  expect(await migrateClickhouse(store.client, ddl, 12)).toContain('0012_trace_id_skip_indexes.sql');
  for (let i = 0; i < 4; i++) await write(`after-${i}`, 10 + i);
  await storeTraces(traceIngestOf(writer), workspaceId, [oneSpanTrace('a-new', 20), oneSpanTrace('m-new', 20), oneSpanTrace('z-new', 20)]);
});

afterAll(async () => {
  await store.client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await store.close();
});

describe('migration 0012: trace ids skip parts', () => {
  it('reads every trace whole, from parts written before the index and after', async () => {
    for (const traceId of ['m-old', 'a-before-1', 'm-new', 'z-after-2']) {
      const trace = await getTrace(store.client, workspaceId, traceId);
      expect(trace.traceId).toBe(traceId);
      expect(trace.spans.map((s) => s.spanId)).toEqual(['root']);
    }
  });

  it("skips the parts written after it that do not hold the trace, in a trace's spans and its summary", async () => {
    // Nine parts cover m-new by their key ranges: the four written before the index stay (they
    // have none), of the five written after it only the one holding m-new does.
    const spans = spansOfTrace('m-new');
    expect(await skipIndexOfTraceId(spans.query, spans.values)).toEqual({ parts: { kept: 5, of: 9 }, granules: { kept: 5, of: 9 } });
    const summary = selectTraceWithSpans.sql({ workspaceId, traceId: 'm-new' });
    expect(await skipIndexOfTraceId(summary.query, summary.values)).toEqual({ parts: { kept: 5, of: 9 }, granules: { kept: 5, of: 9 } });
  });
});
