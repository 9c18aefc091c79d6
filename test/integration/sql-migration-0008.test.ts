import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { stringMapOf, toSpanRows } from '../../src/traces/ingest/ingest.js';
import type { Trace } from '../../src/traces/model/schemas.js';
import { embeddedClickhouseDir } from '../support/stores.js';

/**
 * Migration 0008 on spans stored before it: the attribute and metadata maps are written from
 * `detail`, equal to what the ingest writes for the same span (stringMapOf).
 */
const database = `loupe_m_${randomBytes(5).toString('hex')}`;
let store: ClickhouseStore;

const trace: Trace = {
  traceId: 't-1',
  source: 'sdk',
  spans: [
    {
      spanId: 'a',
      name: 'chat',
      kind: 'llm.chat',
      startTime: '2026-03-01T10:00:00Z',
      endTime: '2026-03-01T10:00:01Z',
      durationMs: 1000,
      status: 'ok',
      attributes: {
        'gen_ai.request.model': 'gpt-4o',
        'user.id': 'u-"1"\n',
        temperature: 0.25,
        big: 12345678901234567000,
        flag: false,
        none: null,
        nested: { a: [1, 'é😀', { b: null }] },
        empty: {},
      },
      metadata: { team: 'support', tags: ['a', 'b'] },
    },
    {
      spanId: 'b',
      parentSpanId: 'a',
      name: 'tool',
      kind: 'tool',
      startTime: '2026-03-01T10:00:00Z',
      endTime: '2026-03-01T10:00:01Z',
      durationMs: 1,
      status: 'ok',
    },
  ],
};

beforeAll(async () => {
  store = await openClickhouse({ database, dataDir: embeddedClickhouseDir });
  const ddl = { database, cluster: undefined, retentionDays: undefined };
  await migrateClickhouse(store.client, ddl, 3);
  // Rows as the ingest wrote them before 0008: no map columns.
  const rows = toSpanRows('ws', [trace]).map(({ attributes_map: _a, metadata_map: _m, ...row }) => row);
  await store.client.insert({ table: 'spans', values: rows, format: 'JSONEachRow' });
  expect(await migrateClickhouse(store.client, ddl)).toContain('0008_attribute_maps_and_sql_views.sql');
});
afterAll(async () => {
  await store?.client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await store?.close();
});

describe('migration 0008', () => {
  it('writes the maps of older rows as the ingest writes them', async () => {
    const rs = await store.client.query({
      query: 'SELECT span_id, attributes_map, metadata_map FROM spans ORDER BY span_id',
      format: 'JSONEachRow',
    });
    const rows = await rs.json<{ span_id: string; attributes_map: Record<string, string>; metadata_map: Record<string, string> }>();
    expect(rows).toEqual([
      { span_id: 'a', attributes_map: stringMapOf(trace.spans[0]!.attributes), metadata_map: stringMapOf(trace.spans[0]!.metadata) },
      { span_id: 'b', attributes_map: {}, metadata_map: {} },
    ]);
    // The parts hold them now: no JSON is parsed when they are read.
    const parts = await store.client.query({
      query: `SELECT count() AS n FROM system.parts_columns WHERE database = {db:String} AND table = 'spans' AND active AND column = 'attributes_map'`,
      query_params: { db: database },
      format: 'JSONEachRow',
    });
    expect((await parts.json<{ n: number }>())[0]!.n).toBeGreaterThan(0);
  });

  it('creates the parameterized views of the SQL endpoint, bound to one workspace', async () => {
    const rs = await store.client.query({
      query: `SELECT count() AS n, any(attributes['gen_ai.request.model']) AS model FROM sql_spans(workspace = 'ws') WHERE kind = 'llm.chat'`,
      format: 'JSONEachRow',
    });
    expect(await rs.json()).toEqual([{ n: 1, model: 'gpt-4o' }]);
    const none = await store.client.query({ query: `SELECT count() AS n FROM sql_spans(workspace = 'other')`, format: 'JSONEachRow' });
    expect(await none.json()).toEqual([{ n: 0 }]);
  });
});
