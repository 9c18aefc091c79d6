import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { getJson, postScores } from './scores-fixtures.js';

/**
 * GET /api/traces/stats with scores: groups by score name, and every group's score averages,
 * against averages computed here from the scores sent (corrections applied, deleted traces,
 * scores without a stored trace and session scores left out).
 */

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;

const window = 'from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z';
const [t1, t2, t3, t4] = ['t1', 't2', 't3', 't4'].map((name) => uniqueId(name)) as [string, string, string, string];
const orphan = uniqueId('orphan');

const traces = [
  { traceId: t1, userId: 'u1', tags: ['x'], model: 'gpt-a', costUsd: 0.3, durationMs: 100 },
  { traceId: t2, userId: 'u2', tags: ['x', 'y'], model: 'gpt-b', costUsd: 0.2, durationMs: 300 },
  { traceId: t3, userId: 'u1', tags: [], model: 'gpt-a', costUsd: 0.1, durationMs: 500 },
  { traceId: t4, userId: 'u2', tags: [], model: 'gpt-b', costUsd: 0.05, durationMs: 700 },
];
const payload = (spec: (typeof traces)[number]) => ({
  traceId: spec.traceId,
  source: 'sdk',
  userId: spec.userId,
  tags: spec.tags,
  spans: [
    span({
      spanId: 'gen',
      kind: 'llm.chat',
      model: spec.model,
      costUsd: spec.costUsd,
      startTime: '2025-01-01T10:00:00.000Z',
      endTime: new Date(Date.parse('2025-01-01T10:00:00.000Z') + spec.durationMs).toISOString(),
      durationMs: spec.durationMs,
    }),
  ],
});

type Sent = { id: string; name: string; value: number | boolean; traceId?: string; spanId?: string; sessionId?: string };
/** As first sent; `c1` is corrected below. */
const first: Sent[] = [
  { id: 'a1', name: 'q', value: 0.2, traceId: t1 },
  { id: 'a2', name: 'q', value: 0.6, traceId: t1, spanId: 'gen' },
  { id: 'a3', name: 'ok', value: true, traceId: t1 },
  { id: 'c1', name: 'q', value: 0, traceId: t2 },
  { id: 'a4', name: 'ok', value: false, traceId: t2, spanId: 'gen' },
  { id: 'a5', name: 'ok', value: true, traceId: t2 },
  { id: 'd1', name: 'q', value: 50, traceId: t4 },
  { id: 'o1', name: 'q', value: 40, traceId: orphan },
  { id: 's1', name: 'q', value: 30, sessionId: 'sess' },
];
const correction: Sent = { id: 'c1', name: 'q', value: 1, traceId: t2 };
/** The scores that count: the corrected ones, on traces that are stored and not deleted. */
const live = [...first.filter((s) => s.id !== 'c1'), correction].filter((s) => s.traceId !== undefined && [t1, t2, t3].includes(s.traceId));

type Averages = Record<string, { n: number; mean: number }>;
function averagesOf(traceIds: string[]): Averages {
  const sums: Record<string, { n: number; sum: number }> = {};
  for (const score of live) {
    if (!traceIds.includes(score.traceId!)) continue;
    const entry = (sums[score.name] ??= { n: 0, sum: 0 });
    entry.n += 1;
    entry.sum += Number(score.value);
  }
  return Object.fromEntries(Object.entries(sums).map(([name, { n, sum }]) => [name, { n, mean: sum / n }]));
}

function expectAverages(actual: Averages | undefined, expected: Averages) {
  expect(Object.keys(actual ?? {}).sort()).toEqual(Object.keys(expected).sort());
  for (const [name, { n, mean }] of Object.entries(expected)) {
    expect(actual![name]!.n).toBe(n);
    expect(actual![name]!.mean).toBeCloseTo(mean, 12);
  }
}

async function stats(query: string, who: Tenant = tenant) {
  const res = await getJson(ctx, who, `/api/traces/stats?${query}&${window}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.groups as Array<{ key: string | null; traceCount: number; scores?: Averages } & Record<string, any>>;
}

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  expect((await post(ctx, tenant, traces.map(payload))).statusCode).toBe(200);
  expect((await postScores(ctx, tenant, { scores: first })).json().data.accepted).toBe(first.length);
  expect((await postScores(ctx, tenant, correction)).json().data.accepted).toBe(1);
  expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${t4}`, headers: tenant.headers })).statusCode).toBe(200);
  // Another workspace: the same trace ids and score names, far other values, and a name of its own.
  await post(ctx, other, traces.map(payload));
  await postScores(ctx, other, {
    scores: [
      { name: 'q', value: 1000, traceId: t3 },
      { name: 'ok', value: false, traceId: t1 },
      { name: 'secret', value: 7, traceId: t1 },
    ],
  });
});
afterAll(async () => {
  await ctx?.close();
});

describe('GET /api/traces/stats with scores', () => {
  it('groups by score name: the traces with a live score of each name, and their averages', async () => {
    const groups = await stats('groupBy=score');
    // Both names are on t1 and t2: equal cost and trace count, so ordered by key.
    expect(groups.map((g) => [g.key, g.traceCount])).toEqual([
      ['ok', 2],
      ['q', 2],
    ]);
    for (const group of groups) {
      const withName = [...new Set(live.filter((s) => s.name === group.key).map((s) => s.traceId!))];
      expectAverages(group.scores, averagesOf(withName));
      expect(group.costUsd).toBeCloseTo(
        traces.filter((t) => withName.includes(t.traceId)).reduce((sum, t) => sum + t.costUsd, 0),
        10,
      );
      expect(group.latencyMs.avg).toBe(200);
    }
  });

  it('carries score averages in groups by span dimension and by trace field, empty for groups without scores', async () => {
    const byModel = await stats('groupBy=model');
    expect(byModel.map((g) => g.key)).toEqual(['gpt-a', 'gpt-b']);
    expectAverages(byModel[0]!.scores, averagesOf([t1, t3]));
    expectAverages(byModel[1]!.scores, averagesOf([t2]));

    const byUser = await stats('groupBy=user');
    expect(byUser.map((g) => g.key)).toEqual(['u1', 'u2']);
    expectAverages(byUser[0]!.scores, averagesOf([t1, t3]));
    expectAverages(byUser[1]!.scores, averagesOf([t2]));

    const byTag = await stats('groupBy=tag');
    const tagged = Object.fromEntries(byTag.map((g) => [String(g.key), g.scores]));
    expectAverages(tagged.x, averagesOf([t1, t2]));
    expectAverages(tagged.y, averagesOf([t2]));
    // t3 has no tags and no scores: the null group is there, with no averages.
    expect(tagged.null).toEqual({});
  });

  it('never mixes another workspace in', async () => {
    const theirs = await stats('groupBy=score', other);
    expect(theirs.map((g) => g.key).sort()).toEqual(['ok', 'q', 'secret']);
    expect(Object.fromEntries(theirs.map((g) => [g.key, g.scores]))).toEqual({
      ok: { ok: { n: 1, mean: 0 }, secret: { n: 1, mean: 7 } },
      q: { q: { n: 1, mean: 1000 } },
      secret: { ok: { n: 1, mean: 0 }, secret: { n: 1, mean: 7 } },
    });
    const mine = await stats('groupBy=source');
    expectAverages(mine[0]!.scores, averagesOf([t1, t2, t3]));
  });

  it('refuses an unknown groupBy, naming the path', async () => {
    const res = await getJson(ctx, tenant, '/api/traces/stats?groupBy=scores');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues[0].path).toBe('querystring.groupBy');
  });
});
