import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { storeTraces, traceIngestOf } from '../../src/traces/ingest/ingest.js';
import { selectChangedTraces } from '../../src/traces/tables/traces-table.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import { embeddedClickhouseDir } from '../support/stores.js';
import { oneSpanTrace, skipIndexOf } from './traces-migration-fixtures.js';

/**
 * Migration 0021: a minmax index of `traces.version`, so that the evaluators' read of the
 * summaries written after a version (tables/traces-table.ts, `selectChangedTraces`) skips the parts written before
 * it, old ones included (the migration indexes them), instead of reading every trace's version.
 */

const workspaceId = 'ws-migration-0021';
const database = `loupe_m_${randomBytes(5).toString('hex')}`;
let store: ClickhouseStore;
let writer: WriteBatcher;

const write = (ids: string[], minute: number) =>
  storeTraces(
    traceIngestOf(writer),
    workspaceId,
    ids.map((id) => oneSpanTrace(id, minute)),
  );

async function versionOf(traceId: string) {
  const result = await store.client.query({
    query: `SELECT toString(max(version)) AS v FROM ${database}.traces WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String}`,
    query_params: { workspaceId, traceId },
    format: 'JSONEachRow',
  });
  return (await result.json<{ v: string }>())[0]!.v;
}

const changedAfter = (afterVersion: string) => ({ workspaceId, filter: {}, afterVersion, fetch: 100 });

beforeAll(async () => {
  store = await openClickhouse({ database, dataDir: embeddedClickhouseDir });
  const ddl = { database, cluster: undefined, retentionDays: undefined };
  expect(await migrateClickhouse(store.client, ddl, 20)).toContain('0020_score_summary.sql');
  // Each write its own part, kept apart: what an ingest leaves between merges.
  await store.client.command({ query: `SYSTEM STOP MERGES ${database}.traces` });
  writer = new WriteBatcher(store.client);
  for (let i = 0; i < 3; i++) await write([`a-before-${i}`, `z-before-${i}`], i);
  // The migration indexes the parts already written by a mutation, which runs as merges do.
  await store.client.command({ query: `SYSTEM START MERGES ${database}.traces` });
  expect(await migrateClickhouse(store.client, ddl, 21)).toContain('0021_trace_version_index.sql');
  await store.client.command({ query: `SYSTEM STOP MERGES ${database}.traces` });
  for (let i = 0; i < 3; i++) await write([`a-after-${i}`, `z-after-${i}`], 10 + i);
});

afterAll(async () => {
  await writer?.close();
  await store.client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await store.close();
});

describe('migration 0021: the summaries written after a version', () => {
  it('reads the traces written after the version, in the order written, whatever their start', async () => {
    const mark = await versionOf('a-after-0');
    expect((await selectChangedTraces(store.client, changedAfter(mark))).map((r) => r.trace_id)).toEqual([
      'a-after-1',
      'z-after-1',
      'a-after-2',
      'z-after-2',
    ]);
    // A trace stored before the mark and written again (an earlier start) is found by the new write.
    await write(['z-before-1'], 0);
    const found = await selectChangedTraces(store.client, changedAfter(mark));
    expect(found.map((r) => r.trace_id)).toEqual(['a-after-1', 'z-after-1', 'a-after-2', 'z-after-2', 'z-before-1']);
    // Strictly after a row of the walk: the rest.
    const after = { version: found[1]!.written, id: found[1]!.trace_id };
    expect((await selectChangedTraces(store.client, { ...changedAfter(mark), after })).map((r) => r.trace_id)).toEqual([
      'a-after-2',
      'z-after-2',
      'z-before-1',
    ]);
  });

  it('skips the parts written before the version, those written before the index included', async () => {
    const { query, values } = selectChangedTraces.sql(changedAfter(await versionOf('a-after-1')));
    // Of the parts the index is given (the engine's own part statistics may leave out some
    // first), it keeps the two holding versions above the mark: the last write and the rewrite.
    const used = await skipIndexOf(store.client, 'idx_version', query, values);
    expect(used?.parts.kept).toBe(2);
    expect(used?.granules.kept).toBe(2);
  });
});
