import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderClickhouseMigration, splitStatements } from '../../src/stores/clickhouse-ddl.js';
import { VersionClock } from '../../src/scores/model/version-clock.js';
import { traceScoresOf } from '../../src/scores/service/trace-scores.js';
import { insertScoreLines, scoreLineOf } from '../../src/scores/tables/scores-table.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { getJson, postScores } from './scores-fixtures.js';

/**
 * The reads of some traces' and sessions' scores (clickhouse/0023, `score_targets`) against
 * answers computed here from the scores this test keeps as live: a trace's scores, the averages
 * per trace, session and user, and GET /api/scores by trace, session and user; after corrections
 * of the name, the value, the trace and the session, a deleted score, a deleted trace, and two
 * writes of one id under two names that did not see each other (as two service instances writing
 * at once). Another workspace holds the same ids, traces, sessions and users with other values,
 * never counted. Then the same after the table is refilled by its migration's own statement.
 */

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;

interface Live {
  id: string;
  name: string;
  value: number;
  traceId: string;
  spanId: string;
  sessionId: string;
}

const [tA, tB, tC, tD] = ['a', 'b', 'c', 'd'].map((name) => uniqueId(`t${name}`)) as [string, string, string, string];
const [s1, s2] = [uniqueId('s1'), uniqueId('s2')];
const [u1, u2] = [uniqueId('u1'), uniqueId('u2')];
/** The traces' sessions and users, as sent: tD is deleted below. */
const traceOf = new Map([
  [tA, { session: s1, user: u1 }],
  [tB, { session: s1, user: u1 }],
  [tC, { session: s2, user: u2 }],
  [tD, { session: '', user: u1 }],
]);
const live = new Map<string, Live>();
/** Spans of the last hour: the session route reads a window of recent traces. */
const recent = { startTime: new Date(Date.now() - 60_000).toISOString(), endTime: new Date(Date.now() - 30_000).toISOString() };

const score = (id: string, name: string, value: number, target: { traceId?: string; spanId?: string; sessionId?: string }, minute = 0) => ({
  id,
  name,
  value,
  ...target,
  timestamp: `2025-01-01T10:${String(minute).padStart(2, '0')}:00.000Z`,
});

function keep(s: ReturnType<typeof score>) {
  live.set(s.id, {
    id: s.id,
    name: s.name,
    value: s.value,
    traceId: s.traceId ?? '',
    spanId: s.spanId ?? '',
    sessionId: s.sessionId ?? '',
  });
}

/** A score's row as the score writer's flush inserts it. */
const row = (workspaceId: string, s: ReturnType<typeof score>, version: string) =>
  scoreLineOf({
    workspace_id: workspaceId,
    id: s.id,
    name: s.name,
    data_type: 'numeric',
    value: s.value,
    string_value: '',
    comment: '',
    metadata: '',
    source: 'api',
    environment: '',
    trace_id: s.traceId ?? '',
    span_id: s.spanId ?? '',
    session_id: s.sessionId ?? '',
    author_id: '',
    config_id: '',
    eval_trace_id: '',
    timestamp: '2025-01-01 10:00:00.000000',
    created_at: '2025-01-01 10:00:00.000000',
    version,
  }) + '\n';

beforeAll(async () => {
  ctx = await createTestContext();
  [tenant, other] = [await ctx.tenant(), await ctx.tenant()];
  const first = [
    score('a1', 'quality', 0.9, { traceId: tA }, 1),
    score('a2', 'quality', 0.4, { traceId: tA, spanId: 'gen' }, 2),
    score('a3', 'tone', 0.2, { traceId: tA }, 3),
    score('b1', 'quality', 0.7, { traceId: tB }, 4),
    score('b2', 'relevance', 0.6, { traceId: tB, spanId: 'gen' }, 5),
    score('c1', 'quality', 0.1, { traceId: tC }, 6),
    score('d1', 'quality', 0.8, { traceId: tD }, 7),
    // A session's own score; a score on tA naming s2 (a session tA is not in).
    score('x1', 'session-q', 0.5, { sessionId: s1 }, 8),
    score('x2', 'quality', 0.3, { traceId: tA, sessionId: s2 }, 9),
    score('x3', 'session-q', 0.25, { sessionId: s1 }, 10),
  ];
  for (const who of [tenant, other]) {
    const values = who === tenant ? first : first.map((s) => ({ ...s, value: 1 - s.value }));
    expect((await postScores(ctx, who, { scores: values })).json().data.rejected).toBe(0);
    const traces = [...traceOf].map(([traceId, { session, user }]) => ({
      traceId,
      source: 'sdk',
      userId: user,
      ...(session && { sessionId: session }),
      spans: [span({ spanId: 'gen', kind: 'llm.chat', ...recent })],
    }));
    expect((await post(ctx, who, traces)).json().data.accepted).toBe(4);
  }
  first.forEach(keep);

  // Corrections in this workspace only: a name (same trace), a value, a move to another trace, a
  // session score moved to another session, a trace score moved to no trace (a session's).
  const corrections = [
    score('a3', 'politeness', 0.6, { traceId: tA }, 3),
    score('b1', 'quality', 0.75, { traceId: tB }, 4),
    score('a2', 'quality', 0.45, { traceId: tC, spanId: 'gen' }, 2),
    score('x3', 'session-q', 0.35, { sessionId: s2 }, 10),
    score('c1', 'quality', 0.15, { sessionId: s2 }, 6),
  ];
  expect((await postScores(ctx, tenant, { scores: corrections })).json().data.rejected).toBe(0);
  corrections.forEach(keep);

  // A deleted score; a deleted trace (tD: its scores go with it).
  expect((await ctx.app.inject({ method: 'DELETE', url: '/api/scores/b2', headers: tenant.headers })).statusCode).toBe(200);
  live.delete('b2');
  expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${tD}`, headers: tenant.headers })).statusCode).toBe(200);
  live.delete('d1');
  traceOf.delete(tD);
  await ctx.writer.settled();
  await ctx.scoreWriter.settled();

  // Two writes of one new id under two names, each not seeing the other (as two instances writing at
  // once): the moves' filter view is detached while the second is inserted, so nothing hides the first.
  const race = [score('r1', 'speed', 0.2, { traceId: tB }, 11), score('r1', 'latency', 0.8, { traceId: tB }, 11)] as const;
  await insertScoreLines(ctx.clickhouse, Buffer.from(row(tenant.workspaceId, race[0], '100')));
  await ctx.clickhouse.command({ query: 'DETACH TABLE scores_to_check_mv' });
  try {
    await insertScoreLines(ctx.clickhouse, Buffer.from(row(tenant.workspaceId, race[1], '200')));
  } finally {
    await ctx.clickhouse.command({ query: 'ATTACH TABLE scores_to_check_mv' });
  }
  keep(race[1]);
});

afterAll(async () => {
  await ctx?.close();
});

function averages(entries: Array<[string, Live]>) {
  const out = new Map<string, Record<string, { n: number; mean: number }>>();
  const sums = new Map<string, Record<string, { n: number; sum: number }>>();
  for (const [key, s] of entries) {
    const byName = sums.get(key) ?? {};
    const entry = (byName[s.name] ??= { n: 0, sum: 0 });
    entry.n += 1;
    entry.sum += s.value;
    sums.set(key, byName);
  }
  for (const [key, byName] of sums)
    out.set(key, Object.fromEntries(Object.entries(byName).map(([name, { n, sum }]) => [name, { n, mean: sum / n }])));
  return out;
}

function expectAverages(actual: Map<string, Record<string, { n: number; mean: number }>>, expected: ReturnType<typeof averages>) {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [key, byName] of expected) {
    expect(Object.keys(actual.get(key)!).sort()).toEqual(Object.keys(byName).sort());
    for (const [name, { n, mean }] of Object.entries(byName)) {
      expect(actual.get(key)![name]!.n).toBe(n);
      expect(actual.get(key)![name]!.mean).toBeCloseTo(mean, 12);
    }
  }
}

const sessionOf = (traceId: string) => traceOf.get(traceId)?.session ?? '';
/** The sessions a score counts for: the one it names, else its trace's. */
const sessionKey = (s: Live) => (s.sessionId !== '' ? s.sessionId : sessionOf(s.traceId));
const ids = (match: (s: Live) => boolean) =>
  [...live.values()]
    .filter(match)
    .map((s) => s.id)
    .sort();

async function expectEveryRead() {
  const scores = traceScoresOf(ctx.clickhouse, new VersionClock(), ctx.scoreWriter);
  const workspaceId = tenant.workspaceId;
  const allTraces = [tA, tB, tC, tD];

  for (const traceId of allTraces) {
    expect((await scores.ofTrace(workspaceId, traceId)).map((s) => s.id).sort()).toEqual(ids((s) => s.traceId === traceId));
  }
  // The race's newest write alone, on its trace and in its averages.
  expect((await scores.ofTrace(workspaceId, tB)).filter((s) => s.id === 'r1').map((s) => s.name)).toEqual(['latency']);
  expectAverages(
    await scores.averagesOfTraces(workspaceId, allTraces),
    averages([...live.values()].filter((s) => s.traceId !== '').map((s) => [s.traceId, s])),
  );
  expectAverages(
    await scores.averagesOfSessions(workspaceId, [s1, s2]),
    averages([...live.values()].flatMap((s): Array<[string, Live]> => ([s1, s2].includes(sessionKey(s)) ? [[sessionKey(s), s]] : []))),
  );
  expectAverages(
    await scores.averagesOfUsers(workspaceId, [u1, u2]),
    averages([...live.values()].flatMap((s): Array<[string, Live]> => (traceOf.has(s.traceId) ? [[traceOf.get(s.traceId)!.user, s]] : []))),
  );

  // GET /api/scores by trace, session (its own scores and its traces') and user (its traces').
  const listed = async (query: string) => {
    const res = await getJson(ctx, tenant, `/api/scores?limit=100&${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { id: string }[]).map((s) => s.id).sort();
  };
  for (const traceId of allTraces) expect(await listed(`traceId=${traceId}`)).toEqual(ids((s) => s.traceId === traceId));
  for (const session of [s1, s2]) {
    expect(await listed(`sessionId=${session}`)).toEqual(ids((s) => s.sessionId === session || sessionOf(s.traceId) === session));
  }
  for (const user of [u1, u2]) expect(await listed(`userId=${user}`)).toEqual(ids((s) => traceOf.get(s.traceId)?.user === user));
  expect(await listed(`userId=${u1}&name=quality`)).toEqual(ids((s) => traceOf.get(s.traceId)?.user === u1 && s.name === 'quality'));
  expect(await listed(`traceId=${tA}&sessionId=${s2}`)).toEqual(ids((s) => s.traceId === tA && s.sessionId === s2));

  // Through the session and user routes.
  const res = await getJson(ctx, tenant, `/api/sessions/${s1}`);
  expect(res.statusCode, res.body).toBe(200);
  const session = res.json().data;
  expectAverages(new Map([[s1, session.scores]]), averages([...live.values()].filter((s) => sessionKey(s) === s1).map((s) => [s1, s])));
}

describe('the scores by target', () => {
  it('answers every read from the live scores only', async () => {
    await expectEveryRead();
  });

  it("never counts another workspace's scores", async () => {
    const scores = traceScoresOf(ctx.clickhouse, new VersionClock(), ctx.scoreWriter);
    // The other workspace holds the first scores uncorrected, 1 - value, on the same ids and traces.
    expect((await scores.ofTrace(other.workspaceId, tB)).map((s) => s.id).sort()).toEqual(['b1', 'b2']);
    expect((await scores.averagesOfTraces(other.workspaceId, [tA])).get(tA)!.tone).toEqual({ n: 1, mean: 0.8 });
    expect((await scores.averagesOfSessions(other.workspaceId, [s1])).get(s1)!['session-q']!.n).toBe(2);
    const theirs = await getJson(ctx, other, `/api/scores?sessionId=${s2}`);
    expect((theirs.json().data as { id: string }[]).map((s) => s.id).sort()).toEqual(['c1', 'x2']);
    expect(await scores.averagesOfTraces(tenant.workspaceId, ['nothing'])).toEqual(new Map());
  });

  it('gives the same answers once refilled from `scores` by its migration', async () => {
    const text = readFileSync(new URL('../../clickhouse/0023_score_targets.sql', import.meta.url), 'utf8');
    const backfill = splitStatements(text).find((s) => s.startsWith('INSERT INTO score_targets'))!;
    await ctx.clickhouse.command({
      query: 'ALTER TABLE score_targets DELETE WHERE workspace_id = {workspaceId:String} SETTINGS mutations_sync = 2',
      query_params: { workspaceId: tenant.workspaceId },
    });
    const scores = traceScoresOf(ctx.clickhouse, new VersionClock(), ctx.scoreWriter);
    expect(await scores.averagesOfTraces(tenant.workspaceId, [tA, tB, tC])).toEqual(new Map());
    for (const statement of renderClickhouseMigration(backfill, { database: 'default' })) {
      await ctx.clickhouse.command({ query: statement });
    }
    await expectEveryRead();
  });
});
