import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickhouse, openClickhouseSession, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { embeddedClickhouseDir } from '../support/stores.js';

/**
 * The service's sessions of the embedded engine bind statement parameters before the engine
 * sees them (decision 084); the SQL endpoint's session leaves that to the engine. Both must read
 * every value alike, and the service's statements must no longer wait for one another.
 */

const database = `loupe_p_${randomBytes(5).toString('hex')}`;
let store: ClickhouseStore;
let engineBound: ClickhouseStore;

beforeAll(async () => {
  store = await openClickhouse({ database, dataDir: embeddedClickhouseDir });
  engineBound = await openClickhouseSession({ database, dataDir: embeddedClickhouseDir }, database);
});

afterAll(async () => {
  await engineBound.close();
  await store.client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await store.close();
});

const hostile = [
  '',
  "it's",
  'back\\slash',
  "\\'",
  "'; DROP DATABASE x; --",
  '{s:String}',
  'nul\0tab\tline\nret\rbell\b',
  'ü 🙂 中文',
  '\\N',
];

const statement = `
  SELECT {s:String} AS s, {ids:Array(String)} AS ids, {none:Array(String)} AS none,
    toString({t:DateTime64(6, 'UTC')}) AS t, toString({big:UInt64}) AS big, {n:UInt32} AS n, {f:Float64} AS f,
    '{s:String}' AS literal -- {s:String}
    , length({ids:Array(String)}) AS count`;

async function read(client: ClickhouseStore['client'], params: Record<string, unknown>) {
  const result = await client.query({ query: statement, query_params: params, format: 'JSONEachRow' });
  return result.json();
}

describe('statement parameters bound by the service', () => {
  it('gives every value as the engine binds it, hostile strings included', async () => {
    for (const s of hostile) {
      const params = {
        s,
        ids: [...hostile, s],
        none: [],
        t: '2026-03-01 10:03:04.123456',
        big: '18446744073709551615',
        n: 51,
        f: 0.1,
      };
      const here = await read(store.client, params);
      expect(here).toEqual(await read(engineBound.client, params));
      // Each value comes back as it was sent (the time and the 64-bit integer as the engine writes them).
      expect(here).toEqual([{ ...params, literal: '{s:String}', count: hostile.length + 1 }]);
    }
  });

  it('refuses a value its type does not take, as the engine does', async () => {
    await expect(read(store.client, { s: 'a', ids: [], none: [], t: 'not a time', big: '1', n: 1, f: 1 })).rejects.toThrow();
    await expect(read(engineBound.client, { s: 'a', ids: [], none: [], t: 'not a time', big: '1', n: 1, f: 1 })).rejects.toThrow();
  });

  it("runs a read beside the writer's statement instead of behind it", async () => {
    // The writer's session holds a slow statement with parameters (about 1.5 s); a read with
    // parameters on the main session, sent after it, answers first. Before, the engine's
    // library ran them one after the other, so the read answered after the slow one.
    const order: string[] = [];
    const slow = store.writeClient
      .query({ query: 'SELECT sum(sleepEachRow(0.3)) AS s FROM numbers({rows:UInt32})', query_params: { rows: 5 }, format: 'JSONEachRow' })
      .then((r) => r.json())
      .then(() => order.push('slow'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const quick = store.client
      .query({ query: 'SELECT {x:String} AS x', query_params: { x: 'quick' }, format: 'JSONEachRow' })
      .then((r) => r.json())
      .then(() => order.push('quick'));
    await Promise.all([slow, quick]);
    expect(order).toEqual(['quick', 'slow']);
  });
});
