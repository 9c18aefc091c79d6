import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spanTextCandidates } from '../../src/traces/tables/spans-table.js';
import { parseSearch } from '../../src/traces/model/search.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { get, post, span, uniqueId } from './traces-fixtures.js';

/**
 * Full-text search of the trace list (GET /api/traces?q=): known texts in names, inputs,
 * outputs, status messages and attribute values are found case-insensitively (non-ASCII too),
 * phrases as written, with every filter and sort, never another workspace's; each hit carries
 * its highlight; the engine reads the text index (clickhouse/0015).
 */
let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;

const ids = {
  zurich: uniqueId('zurich'),
  phrase: uniqueId('phrase'),
  shuffled: uniqueId('shuffled'),
  attribute: uniqueId('attr'),
  newline: uniqueId('newline'),
  failed: uniqueId('failed'),
  costly: uniqueId('costly'),
};

function traceOf(traceId: string, fields: Record<string, unknown>, extra: Record<string, unknown> = {}, minute = 0) {
  const start = new Date(Date.parse('2025-06-01T10:00:00.000Z') + minute * 60_000).toISOString();
  const end = new Date(Date.parse(start) + 1000).toISOString();
  return { traceId, source: 'sdk', ...extra, spans: [span({ spanId: 'root', startTime: start, endTime: end, ...fields })] };
}

beforeAll(async () => {
  ctx = await createTestContext({ ingestAck: 'store' });
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  const posted = await post(ctx, tenant, [
    traceOf(
      ids.zurich,
      {
        kind: 'llm.chat',
        input: { messages: [{ role: 'user', content: 'Where is the Zürich office?' }] },
        output: { text: 'The ÉTÉ schedule applies' },
      },
      { environment: 'production' },
      1,
    ),
    traceOf(ids.phrase, { output: { text: 'the quick brown fox jumps' } }, { environment: 'production' }, 2),
    traceOf(ids.shuffled, { output: { text: 'brown and quick, a fox' } }, { environment: 'staging' }, 3),
    traceOf(ids.attribute, { attributes: { 'customer.tier': 'platinum', nested: { note: 'deepword' } } }, {}, 4),
    traceOf(ids.newline, { input: { text: 'first line\nsecondword on the next' } }, {}, 5),
    traceOf(ids.failed, { name: 'fetch-invoices', status: 'error', statusMessage: 'Gateway Timeout upstream' }, {}, 6),
    traceOf(
      ids.costly,
      { kind: 'llm.chat', model: 'm', costUsd: 2, output: { text: 'a quick brown fox again' } },
      { environment: 'production' },
      7,
    ),
  ]);
  expect(posted.json().data.accepted, posted.body).toBe(7);
  // Another workspace holds the same words: never found from the first.
  const foreign = await post(ctx, other, [traceOf(uniqueId('foreign'), { input: { text: 'Zürich quick brown fox platinum' } })]);
  expect(foreign.json().data.accepted, foreign.body).toBe(1);
});
afterAll(async () => {
  await ctx?.close();
});

async function search(query: string, who = tenant) {
  const res = await get(ctx, who, `/api/traces?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  return {
    ids: body.data.map((item: { traceId: string }) => item.traceId) as string[],
    items: body.data as Array<{
      traceId: string;
      highlight?: { spanId: string; field: string; text: string; matches: Array<{ start: number; end: number }> };
    }>,
    total: body.meta.pagination.total as number,
  };
}
const q = (text: string) => `q=${encodeURIComponent(text)}`;

describe('GET /api/traces?q=', () => {
  it('finds a word inside a JSON value of the input, case-insensitively and with non-ASCII letters, with its highlight', async () => {
    const found = await search(q('zürich'));
    expect(found.ids).toEqual([ids.zurich]);
    const highlight = found.items[0]!.highlight!;
    expect(highlight).toMatchObject({ spanId: 'root', field: 'input' });
    expect(highlight.matches).toHaveLength(1);
    const [match] = highlight.matches;
    expect(highlight.text.slice(match!.start, match!.end)).toBe('Zürich');
    expect((await search(q('ZÜRICH'))).ids).toEqual([ids.zurich]);
    const summer = await search(q('été'));
    expect(summer.ids).toEqual([ids.zurich]);
    expect(summer.items[0]!.highlight).toMatchObject({ field: 'output', text: '{"text":"The ÉTÉ schedule applies"}' });
  });

  it('takes a quoted phrase as written, and words in any order', async () => {
    expect((await search(q('"quick brown fox"'))).ids.sort()).toEqual([ids.phrase, ids.costly].sort());
    expect((await search(q('fox quick brown'))).ids.sort()).toEqual([ids.phrase, ids.shuffled, ids.costly].sort());
    expect((await search(q('"brown quick"'))).ids).toEqual([]);
  });

  it('finds attribute values, names, status messages, and a word after a newline', async () => {
    expect((await search(q('platinum'))).ids).toEqual([ids.attribute]);
    expect((await search(q('deepword'))).ids).toEqual([ids.attribute]);
    expect((await search(q('invoices'))).ids).toEqual([ids.failed]);
    const timeout = await search(q('gateway timeout'));
    expect(timeout.ids).toEqual([ids.failed]);
    expect(timeout.items[0]!.highlight).toMatchObject({ field: 'statusMessage', text: 'Gateway Timeout upstream' });
    expect((await search(q('secondword'))).ids).toEqual([ids.newline]);
  });

  it('narrows to the texts searchIn names', async () => {
    expect((await search(`${q('platinum')}&searchIn=input,output`)).ids).toEqual([]);
    expect((await search(`${q('platinum')}&searchIn=attributes`)).ids).toEqual([ids.attribute]);
    expect((await search(`${q('invoices')}&searchIn=names`)).ids).toEqual([ids.failed]);
    expect((await search(`${q('zürich')}&searchIn=output`)).ids).toEqual([]);
  });

  it('finds nothing for a text no span holds, nor in a prefix of a longer word only absent', async () => {
    const none = await search(q('nonexistentwordxyz'));
    expect(none).toMatchObject({ ids: [], total: 0 });
  });

  it('combines with filters and sorts, and counts its hits', async () => {
    const byCost = await search(
      `${q('quick brown')}&environment=production&sort=-costUsd&startAfter=2025-05-01T00:00:00Z&startBefore=2025-07-01T00:00:00Z`,
    );
    expect(byCost.ids).toEqual([ids.costly, ids.phrase]);
    expect(byCost.total).toBe(2);
    const paged = await search(`${q('quick brown')}&limit=1`);
    expect(paged.ids).toEqual([ids.costly]);
    expect(paged.total).toBe(3);
  });

  it("never finds another workspace's texts", async () => {
    expect((await search(q('platinum'), other)).ids).toHaveLength(1);
    expect((await search(q('secondword'), other)).ids).toEqual([]);
    expect((await search(q('zürich'))).ids).toEqual([ids.zurich]);
  });

  it('refuses a query without a word, an unknown searchIn, and searchIn without q', async () => {
    for (const query of [q('!!!'), `${q('fox')}&searchIn=bodies`, 'searchIn=input', `q=${'a'.repeat(201)}`]) {
      const res = await get(ctx, tenant, `/api/traces?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('reads the text index of the spans (EXPLAIN)', async () => {
    const { sql: query, values } = spanTextCandidates(parseSearch('platinum', undefined));
    const result = await ctx.clickhouse.query({
      query: `EXPLAIN indexes = 1 ${query}`,
      query_params: { ...values, workspaceId: tenant.workspaceId },
      format: 'JSONEachRow',
    });
    const plan = (await result.json<{ explain: string }>()).map((row) => row.explain.trim());
    const at = plan.indexOf('Name: idx_detail_text');
    expect(at, plan.join('\n')).toBeGreaterThan(0);
    const index = plan.slice(at, at + 6).join('\n');
    expect(index).toMatch(/tokens: \["platinum"\]/);
    // Of the part's granules, only the one holding the word is read.
    expect(index).toMatch(/Granules: 1\/\d+/);
  });
});
