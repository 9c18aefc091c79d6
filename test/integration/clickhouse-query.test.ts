import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openClickhouse, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { defineQuery } from '../../src/stores/clickhouse-query.js';
import { embeddedClickhouseDir } from '../support/stores.js';

/** Named queries (stores/clickhouse-query.ts): parameters checked and bound, rows parsed by their schema. */

const database = `loupe_q_${randomBytes(5).toString('hex')}`;
let store: ClickhouseStore;
beforeAll(async () => {
  store = await openClickhouse({ database, dataDir: embeddedClickhouseDir });
});
afterAll(async () => {
  await store.client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await store.close();
});

const doubled = defineQuery({
  name: 'doubled',
  params: z.object({ n: z.number().int().min(0), label: z.string() }),
  row: z.object({ x: z.number(), label: z.string() }),
  sql: (values) => ({ values, query: 'SELECT {n:UInt32} * 2 AS x, {label:String} AS label FROM numbers(2)' }),
});

describe('defineQuery', () => {
  it('binds the parameters in the engine and answers parsed rows', async () => {
    const label = "it's \\ {n:UInt32}";
    expect(await doubled(store.client, { n: 21, label })).toEqual([
      { x: 42, label },
      { x: 42, label },
    ]);
    expect(doubled.sql({ n: 1, label: 'a' })).toEqual({ values: { n: 1, label: 'a' }, query: expect.not.stringContaining("'a'") });
  });

  it('refuses parameters its schema refuses, by the query name, before running it', async () => {
    await expect(doubled(store.client, { n: -1, label: 'a' })).rejects.toThrow(/^doubled: invalid parameters/);
  });

  it('fails on rows its schema does not describe instead of passing them on', async () => {
    const wrong = defineQuery({
      name: 'wrong',
      params: z.object({}),
      row: z.object({ x: z.string() }),
      sql: () => ({ values: {}, query: 'SELECT 1 AS x' }),
    });
    await expect(wrong(store.client, {})).rejects.toThrow(/^wrong: unexpected rows/);
  });

  it('appends the statement settings given', async () => {
    const threads = defineQuery({
      name: 'threads',
      params: z.object({}),
      row: z.object({ v: z.number() }),
      sql: () => ({ values: {}, query: "SELECT getSetting('max_threads') AS v" }),
    });
    expect(await threads(store.client, {}, 'SETTINGS max_threads = 3')).toEqual([{ v: 3 }]);
  });
});
