import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTraces } from '../../src/traces/query/list.js';
import { listTracesQuery } from '../../src/traces/model/wire/list-schemas.js';
import { defaultQueryLimits, type QueryLimits } from '../../src/traces/model/query-limits.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span } from './traces-fixtures.js';

/**
 * A broad full-text search (search-pages.ts): when the text index finds the words in at least
 * `searchScanFrom` traces, the list walks the traces newest first in batches and checks only
 * theirs. Here `searchScanFrom` is 1, so every search walks; its pages, cursors, filters and
 * sorts must be those of the selective read (the default here, few traces hold each word).
 */
let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
const walking: QueryLimits = { ...defaultQueryLimits, searchScanFrom: 1 };
const traces = 160;
const idOf = (i: number) => `walk-${process.pid}-${String(i).padStart(3, '0')}`;

function traceOf(i: number, fields: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const start = new Date(Date.parse('2025-06-01T10:00:00.000Z') + i * 60_000).toISOString();
  const end = new Date(Date.parse(start) + 1000).toISOString();
  return { traceId: idOf(i), source: 'sdk', ...extra, spans: [span({ spanId: 'root', startTime: start, endTime: end, ...fields })] };
}

beforeAll(async () => {
  ctx = await createTestContext({ ingestAck: 'store' });
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  // Every third trace holds `thirdword` in its output; the two oldest hold `oldword third`; trace 158
  // once held `staleword`, then its span was sent again without it.
  const batch = Array.from({ length: traces }, (_, i) =>
    traceOf(
      i,
      {
        kind: 'llm.chat',
        model: 'm',
        costUsd: i / 100,
        output: {
          text: `${i % 3 === 0 ? 'the thirdword here' : 'nothing'}${i < 2 ? ' oldword third' : ''}${i === 158 ? ' staleword' : ''}`,
        },
      },
      { environment: i % 2 === 0 ? 'production' : 'staging' },
    ),
  );
  expect((await post(ctx, tenant, batch)).json().data.accepted).toBe(traces);
  expect((await post(ctx, tenant, [traceOf(158, { kind: 'llm.chat', output: { text: 'rewritten' } })])).json().data.accepted).toBe(1);
  expect((await post(ctx, other, [traceOf(0, { output: { text: 'thirdword oldword' } })])).json().data.accepted).toBe(1);
});
afterAll(async () => {
  await ctx?.close();
});

const list = (query: Record<string, unknown>, limits: QueryLimits = walking, who = tenant) =>
  listTraces(ctx.clickhouse, who.workspaceId, listTracesQuery.parse(query), limits);
const ids = (page: Awaited<ReturnType<typeof list>>) => page.items.map((item) => item.traceId);
const matching = (test: (i: number) => boolean) =>
  Array.from({ length: traces }, (_, i) => i)
    .filter(test)
    .map(idOf);

describe('a broad search walks the list newest first', () => {
  it('finds the newest matches first, with their highlights, and the total of a walk that reached the end', async () => {
    const expected = matching((i) => i % 3 === 0).reverse();
    const page = await list({ q: 'thirdword', limit: 100 });
    expect(ids(page)).toEqual(expected);
    expect(page.pagination).toMatchObject({ total: expected.length, hasMore: false });
    expect(page.items[0]!.highlight).toMatchObject({ spanId: 'root', field: 'output' });
    expect(ids(await list({ q: 'thirdword', limit: 100 }, defaultQueryLimits))).toEqual(expected);
  });

  it('pages by cursor and by offset exactly as the selective read, with an estimated total while pages remain', async () => {
    const expected = matching((i) => i % 3 === 0).reverse();
    const first = await list({ q: 'thirdword', limit: 2 });
    expect(ids(first)).toEqual(expected.slice(0, 2));
    expect(first.pagination.hasMore).toBe(true);
    // The share of matches among the 12 traces walked (4), times the 160 traces.
    expect(first.pagination.total).toBe(53);
    const walked: string[] = [...ids(first)];
    let cursor = first.pagination.nextCursor;
    while (cursor) {
      const page = await list({ q: 'thirdword', limit: 2, cursor });
      walked.push(...ids(page));
      cursor = page.pagination.nextCursor;
    }
    expect(walked).toEqual(expected);
    expect(ids(await list({ q: 'thirdword', limit: 3, offset: 4 }))).toEqual(expected.slice(4, 7));
  });

  it('reads the rest with the page statement when the walk finds too few, and never a stale or foreign text', async () => {
    const old = await list({ q: 'oldword', limit: 1 });
    expect(ids(old)).toEqual([idOf(1)]);
    expect(old.pagination.hasMore).toBe(true);
    expect(ids(await list({ q: 'oldword', limit: 1, cursor: old.pagination.nextCursor! }))).toEqual([idOf(0)]);
    expect(ids(await list({ q: 'staleword' }))).toEqual([]);
    // A word is found as a word: `third` inside `thirdword` is not.
    expect(ids(await list({ q: 'third' }))).toEqual([idOf(1), idOf(0)]);
    expect(ids(await list({ q: 'third' }, defaultQueryLimits))).toEqual([idOf(1), idOf(0)]);
    expect(ids(await list({ q: 'oldword' }, walking, other))).toEqual([idOf(0)]);
  });

  it('combines with filters and other sorts', async () => {
    const query = {
      q: 'thirdword',
      environment: 'production',
      sort: '-costUsd',
      startAfter: '2025-05-01T00:00:00Z',
      startBefore: '2025-07-01T00:00:00Z',
      limit: 3,
    };
    const expected = matching((i) => i % 6 === 0).reverse();
    const page = await list(query);
    expect(ids(page)).toEqual(expected.slice(0, 3));
    expect(ids(await list(query, defaultQueryLimits))).toEqual(expected.slice(0, 3));
    expect(ids(await list({ ...query, searchIn: 'names' }))).toEqual([]);
  });
});
