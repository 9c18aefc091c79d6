import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderClickhouseMigration, splitStatements } from '../../src/stores/clickhouse-ddl.js';
import type { TraceScoreCondition } from '../../src/contract/trace-scores.js';
import { VersionClock } from '../../src/scores/model/version-clock.js';
import { traceScoresOf } from '../../src/scores/service/trace-scores.js';
import { selectPromptScoreFigures } from '../../src/scores/tables/prompt-version-scores-table.js';
import { selectScoreNameFigures, selectScoresOverTime } from '../../src/scores/tables/score-summary-table.js';
import { selectScoreValuesOfTraces } from '../../src/scores/tables/score-targets-table.js';
import { insertScoreLines, scoreLineOf, type ScoreRowToInsert } from '../../src/scores/tables/scores-table.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { getJson, postScores } from './scores-fixtures.js';

/**
 * Every read of the score summary (clickhouse/0020) against figures computed here from the
 * scores this test keeps as live: corrections that keep their key and that move a score to
 * another name or trace, an older row arriving after its correction, a deleted score, a deleted
 * trace, scores sent before their trace, a session score; the same trace ids and names in
 * another workspace, never counted. Then the same after the summary is refilled from `scores`
 * by the migration's own statement.
 */

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;

interface Live {
  id: string;
  name: string;
  value: number;
  stringValue: string;
  dataType: 'numeric' | 'categorical' | 'boolean';
  traceId: string;
  spanId: string;
}

const [t1, t2, t3, t4] = ['t1', 't2', 't3', 't4'].map((name) => uniqueId(name)) as [string, string, string, string];
const late = uniqueId('late');
const allTraces = [t1, t2, t3, t4, late];
const promptName = uniqueId('prompt');
const at = (minute: number) => `2025-01-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const spans = (version: string) => [
  span({ spanId: 'gen', kind: 'llm.chat', promptName, promptVersion: version, startTime: at(0), endTime: at(1) }),
  span({ spanId: 'tool', startTime: at(0), endTime: at(1) }),
];
/** The live scores, by id, as this test expects them after every step. */
const live = new Map<string, Live>();

function expectedAveragesOf(traceIds: string[]) {
  const out = new Map<string, Record<string, { n: number; sum: number }>>();
  for (const s of live.values()) {
    if (!traceIds.includes(s.traceId)) continue;
    const byName = out.get(s.traceId) ?? {};
    const entry = (byName[s.name] ??= { n: 0, sum: 0 });
    entry.n += 1;
    entry.sum += s.value;
    out.set(s.traceId, byName);
  }
  return out;
}

function expectAverages(
  actual: Map<string, Record<string, { n: number; mean: number }>>,
  expected: Map<string, Record<string, { n: number; sum: number }>>,
) {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [key, names] of expected) {
    expect(Object.keys(actual.get(key)!).sort()).toEqual(Object.keys(names).sort());
    for (const [name, { n, sum }] of Object.entries(names)) {
      expect(actual.get(key)![name]!.n).toBe(n);
      expect(actual.get(key)![name]!.mean).toBeCloseTo(sum / n, 12);
    }
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

beforeAll(async () => {
  ctx = await createTestContext();
  [tenant, other] = [await ctx.tenant(), await ctx.tenant()];
  // Scores before their traces: t1, t2 and t3 land after their scores; `late` never does.
  const numeric = (id: string, name: string, value: number, traceId: string, spanId = '') => ({
    id,
    name,
    value,
    traceId,
    ...(spanId && { spanId }),
    timestamp: at(live.size % 50),
  });
  const first = [
    numeric('q1', 'quality', 0.9, t1),
    numeric('q2', 'quality', 0.4, t1, 'gen'),
    numeric('q3', 'quality', 0.7, t2),
    numeric('q4', 'quality', 0.95, t2, 'tool'),
    numeric('q5', 'quality', 0.2, t3),
    numeric('q6', 'quality', 0.99, t4),
    numeric('q7', 'quality', 0.97, late),
    numeric('m1', 'relevance', 0.3, t1, 'gen'),
    numeric('m2', 'relevance', 0.8, t2),
    numeric('v1', 'quality', 0.96, t3, 'gen'),
    { id: 'b1', name: 'thumbs', value: true, traceId: t1, timestamp: at(5) },
    { id: 'b2', name: 'thumbs', value: false, traceId: t2, spanId: 'gen', timestamp: at(5) },
    { id: 'c1', name: 'tone', value: 'curt', traceId: t1, timestamp: at(5) },
    { id: 'c2', name: 'tone', value: 'polite', traceId: t2, spanId: 'gen', timestamp: at(5) },
    { id: 'c3', name: 'tone', value: 'curt', traceId: t3, timestamp: at(5) },
    // A session score, given now: outside the figures' window, on no trace.
    { id: 's1', name: 'quality', value: 0.99, sessionId: uniqueId('session') },
  ];
  for (const who of [tenant, other]) {
    expect((await postScores(ctx, who, { scores: first })).json().data.rejected).toBe(0);
  }
  for (const s of first) {
    if (s.traceId === undefined) continue;
    const dataType = typeof s.value === 'number' ? 'numeric' : typeof s.value === 'boolean' ? 'boolean' : 'categorical';
    live.set(s.id, {
      id: s.id,
      name: s.name,
      dataType,
      value: dataType === 'numeric' ? Number(s.value) : dataType === 'boolean' ? Number(s.value) : 0,
      stringValue: dataType === 'numeric' ? '' : String(s.value),
      traceId: s.traceId,
      spanId: s.spanId ?? '',
    });
  }
  for (const [i, traceId] of [t1, t2, t3, t4].entries()) {
    const res = await post(ctx, tenant, [{ traceId, source: 'sdk', spans: spans(i % 2 ? '2' : '1') }]);
    expect(res.json().data.accepted).toBe(1);
    await post(ctx, other, [{ traceId, source: 'sdk', spans: spans('1') }]);
  }
  await ctx.writer.settled();

  // A correction of the value on the same key; a correction moving q1 to another name and
  // trace, m2 to another trace, v1 to another name; only in this workspace.
  const corrections = [
    numeric('q3', 'quality', 0.1, t2),
    numeric('q1', 'relevance', 0.5, t2, 'gen'),
    numeric('m2', 'relevance', 0.6, t3),
    numeric('v1', 'speed', 0.96, t3, 'gen'),
  ];
  expect((await postScores(ctx, tenant, { scores: corrections })).json().data.rejected).toBe(0);
  for (const c of corrections)
    live.set(c.id, { ...live.get(c.id)!, name: c.name, value: c.value, traceId: c.traceId, spanId: c.spanId ?? '' });

  // An older row of b1 (under another name) arriving after the live one: it never counts.
  await insertScoreLines(
    ctx.clickhouse,
    jsonLines([
      {
        workspace_id: tenant.workspaceId,
        id: 'b1',
        name: 'quality',
        data_type: 'numeric',
        value: 0.99,
        string_value: '',
        comment: '',
        metadata: '',
        source: 'api',
        environment: '',
        trace_id: t4,
        span_id: '',
        session_id: '',
        author_id: '',
        config_id: '',
        eval_trace_id: '',
        timestamp: '2025-01-01 10:00:00.000000',
        created_at: '2025-01-01 10:00:00.000000',
        version: '1',
      },
    ]),
  );

  // A deleted score; a deleted trace (t4: its scores go with it).
  expect((await ctx.app.inject({ method: 'DELETE', url: '/api/scores/q5', headers: tenant.headers })).statusCode).toBe(200);
  live.delete('q5');
  expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${t4}`, headers: tenant.headers })).statusCode).toBe(200);
  for (const [id, s] of live) if (s.traceId === t4) live.delete(id);
  await ctx.writer.settled();
});

afterAll(async () => {
  await ctx?.close();
});

/** Rows as their lines, as the score writer's flush inserts them. */
const jsonLines = (rows: ScoreRowToInsert[]): Buffer => Buffer.from(rows.map((row) => scoreLineOf(row) + '\n').join(''));

/** The traces of this test with a live score matching the condition of the trace list's score filter. */
async function tracesWhere(condition: TraceScoreCondition) {
  const part = traceScoresOf(ctx.clickhouse, new VersionClock(), ctx.scoreWriter).traceCondition(condition);
  const result = await ctx.clickhouse.query({
    query: `SELECT trace_id FROM (SELECT arrayJoin({all:Array(String)}) AS trace_id) WHERE ${part.sql} ORDER BY trace_id`,
    query_params: { ...part.values, all: allTraces, workspaceId: tenant.workspaceId },
    format: 'JSONEachRow',
  });
  return (await result.json<{ trace_id: string }>()).map((r) => r.trace_id);
}

async function expectEveryRead() {
  const scores = traceScoresOf(ctx.clickhouse, new VersionClock(), ctx.scoreWriter);
  const workspaceId = tenant.workspaceId;

  // A trace's scores, and the averages per trace.
  for (const traceId of allTraces) {
    const ids = (await scores.ofTrace(workspaceId, traceId)).map((s) => s.id).sort();
    expect(ids).toEqual(
      [...live.values()]
        .filter((s) => s.traceId === traceId)
        .map((s) => s.id)
        .sort(),
    );
  }
  expectAverages(await scores.averagesOfTraces(workspaceId, allTraces), expectedAveragesOf(allTraces));

  // The trace list's score condition, numeric range and category.
  const expectedWhere = (match: (s: Live) => boolean) => [...new Set([...live.values()].filter(match).map((s) => s.traceId))].sort();
  for (const [min, max] of [
    [0.9, undefined],
    [undefined, 0.5],
    [0.45, 0.55],
  ] as const) {
    expect(await tracesWhere({ name: 'quality', min, max })).toEqual(
      expectedWhere((s) => s.name === 'quality' && (min === undefined || s.value >= min) && (max === undefined || s.value <= max)),
    );
  }
  expect(await tracesWhere({ name: 'relevance', min: 0.4 })).toEqual(expectedWhere((s) => s.name === 'relevance' && s.value >= 0.4));
  expect(await tracesWhere({ name: 'tone', value: 'curt' })).toEqual(expectedWhere((s) => s.name === 'tone' && s.stringValue === 'curt'));
  expect(await tracesWhere({ name: 'speed' })).toEqual(expectedWhere((s) => s.name === 'speed'));

  // The traces per score name (stats by score) and the averages per stats group.
  const names = scores.traceNames();
  const pairs = await ctx.clickhouse.query({
    query: `SELECT trace_id, key FROM (${names.sql}) ORDER BY trace_id, key`,
    query_params: { workspaceId },
    format: 'JSONEachRow',
  });
  expect(await pairs.json()).toEqual(
    [...new Set([...live.values()].map((s) => `${s.traceId}\u0000${s.name}`))]
      .sort()
      .map((pair) => ({ trace_id: pair.split('\u0000')[0], key: pair.split('\u0000')[1] })),
  );
  const groups = { g1: [t1, t2], g2: [t2, t3, late] };
  const groupAverages = await scores.averagesOfGroups(workspaceId, {
    sql: "SELECT 'g1' AS key, arrayJoin({g1:Array(String)}) AS trace_id UNION ALL SELECT 'g2' AS key, arrayJoin({g2:Array(String)}) AS trace_id",
    values: groups,
  });
  const expectedGroups = new Map<string, Record<string, { n: number; sum: number }>>();
  for (const [key, traceIds] of Object.entries(groups)) {
    const merged: Record<string, { n: number; sum: number }> = {};
    for (const byName of expectedAveragesOf(traceIds).values()) {
      for (const [name, { n, sum }] of Object.entries(byName)) {
        const entry = (merged[name] ??= { n: 0, sum: 0 });
        entry.n += n;
        entry.sum += sum;
      }
    }
    expectedGroups.set(key, merged);
  }
  expectAverages(groupAverages, expectedGroups);

  // Run items' values per trace and name.
  const values = await selectScoreValuesOfTraces(ctx.clickhouse, { workspaceId, traceIds: allTraces });
  const expectedValues = expectedAveragesOf(allTraces);
  expect(values.map((v) => `${v.trace_id}/${v.name}/${v.n}`).sort()).toEqual(
    [...expectedValues].flatMap(([traceId, byName]) => Object.entries(byName).map(([name, { n }]) => `${traceId}/${name}/${n}`)).sort(),
  );

  // The figures per name (count, mean, median) and over time, in a window holding every score.
  const window = { workspaceId, from: '2025-01-01 00:00:00.000000', to: '2025-01-02 00:00:00.000000' };
  const figures = await selectScoreNameFigures(ctx.clickhouse, { ...window, name: 'quality' });
  const quality = [...live.values()].filter((s) => s.name === 'quality').map((s) => s.value);
  expect(figures).toHaveLength(1);
  expect(figures[0]!.n).toBe(quality.length);
  expect(figures[0]!.mean).toBeCloseTo(quality.reduce((a, b) => a + b, 0) / quality.length, 12);
  expect(figures[0]!.p50).toBeCloseTo(median(quality), 12);
  const overTime = await selectScoresOverTime(ctx.clickhouse, { ...window, interval: 'day' });
  const countOf = (name: string) => [...live.values()].filter((s) => s.name === name).length;
  expect(Object.fromEntries(overTime.map((b) => [b.name, b.n]))).toEqual(
    Object.fromEntries([...new Set([...live.values()].map((s) => s.name))].map((name) => [name, countOf(name)])),
  );

  // The prompt's versions: scores on its spans ('gen') and on their traces; t1 and t3 use 1, t2 uses 2 (t4 deleted).
  const versionOf = new Map([
    [t1, '1'],
    [t2, '2'],
    [t3, '1'],
  ]);
  const prompt = await selectPromptScoreFigures(ctx.clickhouse, { workspaceId, promptName });
  const expectedPrompt = new Map<string, { n: number; sum: number; values: number[] }>();
  for (const s of live.values()) {
    const version = versionOf.get(s.traceId);
    if (version === undefined || (s.spanId !== '' && s.spanId !== 'gen')) continue;
    const key = `${version}/${s.name}/${s.dataType === 'categorical' ? s.stringValue : ''}`;
    const entry = expectedPrompt.get(key) ?? { n: 0, sum: 0, values: [] };
    entry.n += 1;
    entry.sum += s.value;
    entry.values.push(s.value);
    expectedPrompt.set(key, entry);
  }
  expect(prompt.map((r) => `${r.version}/${r.name}/${r.category}`).sort()).toEqual([...expectedPrompt.keys()].sort());
  for (const row of prompt) {
    const expected = expectedPrompt.get(`${row.version}/${row.name}/${row.category}`)!;
    expect(row.n).toBe(expected.n);
    expect(row.mean).toBeCloseTo(expected.sum / expected.n, 12);
    if (expected.n > 1) {
      const mean = expected.sum / expected.n;
      const variance = expected.values.reduce((a, v) => a + (v - mean) ** 2, 0) / (expected.n - 1);
      expect(row.variance).toBeCloseTo(variance, 12);
    }
  }

  // Through HTTP: the trace list filtered by a score, and a trace's scores.
  const listed = (await getJson(ctx, tenant, '/api/traces?score=quality&scoreMin=0.9')).json().data as { traceId: string }[];
  expect(listed.map((t) => t.traceId).sort()).toEqual(
    expectedWhere((s) => s.name === 'quality' && s.value >= 0.9).filter((t) => t !== late),
  );
  const detail = (await getJson(ctx, tenant, `/api/traces/${t2}`)).json().data as { scores?: { id: string }[] };
  expect((detail.scores ?? []).map((s) => s.id).sort()).toEqual(
    [...live.values()]
      .filter((s) => s.traceId === t2 && s.spanId === '')
      .map((s) => s.id)
      .sort(),
  );
}

describe('the score summary', () => {
  it('answers every read from the live scores only', async () => {
    await expectEveryRead();
  });

  it("never counts another workspace's scores", async () => {
    const scores = traceScoresOf(ctx.clickhouse, new VersionClock(), ctx.scoreWriter);
    // The other workspace holds the first scores uncorrected, on the same trace ids.
    const theirs = await scores.averagesOfTraces(other.workspaceId, [t1]);
    expect(theirs.get(t1)!.quality).toEqual({ n: 2, mean: (0.9 + 0.4) / 2 });
    expect(await scores.averagesOfTraces(other.workspaceId, ['nothing'])).toEqual(new Map());
  });

  it('gives the same answers once both summaries are refilled from `scores` by their migrations', async () => {
    const backfills = ['0020_score_summary.sql', '0023_score_targets.sql'].map((file) => {
      const text = readFileSync(new URL(`../../clickhouse/${file}`, import.meta.url), 'utf8');
      return splitStatements(text).find((s) => /^INSERT INTO score_(summary|targets) /.test(s))!;
    });
    for (const table of ['score_summary', 'score_targets']) {
      await ctx.clickhouse.command({
        query: `ALTER TABLE ${table} DELETE WHERE workspace_id = {workspaceId:String} SETTINGS mutations_sync = 2`,
        query_params: { workspaceId: tenant.workspaceId },
      });
    }
    const scores = traceScoresOf(ctx.clickhouse, new VersionClock(), ctx.scoreWriter);
    expect(await scores.averagesOfTraces(tenant.workspaceId, allTraces)).toEqual(new Map());
    expect(await tracesWhere({ name: 'quality' })).toEqual([]);
    for (const backfill of backfills) {
      for (const statement of renderClickhouseMigration(backfill, { database: 'default' })) {
        await ctx.clickhouse.command({ query: statement });
      }
    }
    await expectEveryRead();
  });
});
