import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderClickhouseMigration, splitStatements } from '../../src/stores/clickhouse-ddl.js';
import { selectPromptScoreFigures } from '../../src/scores/tables/prompt-version-scores-table.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { getJson, postScores } from './scores-fixtures.js';

/**
 * The prompt versions' scores (clickhouse/0025) against figures computed here from the spans and
 * scores this test keeps as live: scores sent before their trace, a corrected value, a span score
 * moved to a span of the other version, a trace score moved to another trace, a span re-sent under
 * the other version, a deleted score, a deleted trace, a window; the same trace ids, prompt and
 * score ids in another workspace, never counted. Then the same once the tables are refilled by the
 * migration's own statements.
 */

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
const promptName = uniqueId('prompt');
const v1 = '1.0.0';
const v2 = '1.1.0';
const [tA, tB, tC, tD] = ['tA', 'tB', 'tC', 'tD'].map((name) => uniqueId(name)) as [string, string, string, string];
const at = (hour: number, minute: number) => `2025-01-01T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00.000Z`;

interface LiveSpan {
  traceId: string;
  spanId: string;
  version: string | null;
  start: string;
}
interface LiveScore {
  id: string;
  name: string;
  value: number;
  traceId: string;
  spanId: string;
}
const spans = new Map<string, LiveSpan>();
const scores = new Map<string, LiveScore>();

/** One trace's spans, sent; each one remembered as live. */
async function sendTrace(who: Tenant, traceId: string, list: Array<{ spanId: string; version: string | null; start: string }>) {
  const body = list.map((s) =>
    span({
      spanId: s.spanId,
      kind: 'llm.chat',
      ...(s.version === null ? {} : { promptName, promptVersion: s.version }),
      startTime: s.start,
      endTime: s.start.replace(':00.000Z', ':30.000Z'),
    }),
  );
  expect((await post(ctx, who, [{ traceId, source: 'sdk', spans: body }])).json().data.accepted).toBe(1);
  if (who === tenant) for (const s of list) spans.set(`${traceId}/${s.spanId}`, { traceId, ...s });
}

async function sendScores(who: Tenant, list: LiveScore[]) {
  const payload = list.map((s) => ({ id: s.id, name: s.name, value: s.value, traceId: s.traceId, ...(s.spanId && { spanId: s.spanId }) }));
  expect((await postScores(ctx, who, { scores: payload })).json().data.rejected).toBe(0);
  if (who === tenant) for (const s of list) scores.set(s.id, s);
}

async function settle() {
  await ctx.writer.settled();
  await ctx.scoreWriter.settled();
}

/** Per version and score name: the values of the live scores, as this test expects them. */
function expected(window?: { after: string; before: string }) {
  const inWindow = (s: LiveSpan) => window === undefined || (s.start > window.after && s.start < window.before);
  const out = new Map<string, number[]>();
  for (const score of scores.values()) {
    const versions = new Set<string>();
    for (const s of spans.values()) {
      if (s.traceId !== score.traceId || s.version === null || !inWindow(s)) continue;
      if (score.spanId === '' || score.spanId === s.spanId) versions.add(s.version);
    }
    for (const version of versions) {
      const key = `${version}/${score.name}`;
      out.set(key, [...(out.get(key) ?? []), score.value]);
    }
  }
  return out;
}

async function expectFigures(window?: { after: string; before: string }) {
  const stored = (iso: string) => iso.replace('T', ' ').replace('Z', '000');
  const bounds = window && { startAfter: stored(window.after), startBefore: stored(window.before) };
  const rows = await selectPromptScoreFigures(ctx.clickhouse, {
    workspaceId: tenant.workspaceId,
    versions: [
      { name: promptName, version: v2 },
      { name: promptName, version: v1 },
    ],
    ...bounds,
  });
  const want = expected(window);
  expect(rows.map((r) => `${r.version}/${r.name}`).sort()).toEqual([...want.keys()].sort());
  for (const row of rows) {
    expect(row.prompt_name).toBe(promptName);
    const values = want.get(`${row.version}/${row.name}`)!;
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    expect(row.n).toBe(values.length);
    expect(row.mean).toBeCloseTo(mean, 12);
    if (values.length > 1) expect(row.variance).toBeCloseTo(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1), 12);
  }
  // Every version of the prompt (the metrics' score means): the same figures.
  const all = await selectPromptScoreFigures(ctx.clickhouse, { workspaceId: tenant.workspaceId, promptName, ...bounds });
  expect(all.map((r) => `${r.version}/${r.name}/${r.n}`).sort()).toEqual(rows.map((r) => `${r.version}/${r.name}/${r.n}`).sort());
}

const score = (id: string, name: string, value: number, traceId: string, spanId = ''): LiveScore => ({ id, name, value, traceId, spanId });

beforeAll(async () => {
  ctx = await createTestContext();
  [tenant, other] = [await ctx.tenant(), await ctx.tenant()];

  // tC's scores come before tC itself.
  const early = [score('c1', 'quality', 0.3, tC), score('c2', 'quality', 0.8, tC, 'c-gen'), score('c3', 'speed', 0.5, tC, 'c-gen')];
  for (const who of [tenant, other]) await sendScores(who, early);
  await settle();

  for (const who of [tenant, other]) {
    // tA holds one span of each version and one naming no prompt, an hour earlier than the rest.
    await sendTrace(who, tA, [
      { spanId: 'a1', version: v1, start: at(9, 0) },
      { spanId: 'a2', version: v2, start: at(9, 1) },
      { spanId: 'a3', version: null, start: at(9, 2) },
    ]);
    await sendTrace(who, tB, [{ spanId: 'b1', version: v1, start: at(10, 0) }]);
    await sendTrace(who, tC, [{ spanId: 'c-gen', version: v2, start: at(10, 1) }]);
    await sendTrace(who, tD, [
      { spanId: 'd1', version: v1, start: at(10, 2) },
      { spanId: 'd2', version: v1, start: at(10, 3) },
    ]);
  }
  await settle();
  const later = [
    score('a-trace', 'quality', 0.9, tA),
    score('a-1', 'quality', 0.4, tA, 'a1'),
    score('a-2', 'quality', 0.6, tA, 'a2'),
    score('a-3', 'quality', 0.1, tA, 'a3'),
    score('b-trace', 'quality', 0.7, tB),
    score('b-1', 'speed', 0.2, tB, 'b1'),
    score('d-trace', 'quality', 0.95, tD),
  ];
  for (const who of [tenant, other]) await sendScores(who, later);
  await settle();
});

afterAll(async () => {
  await ctx?.close();
});

describe("the prompt versions' scores", () => {
  it('count scores sent before their trace, once per version for a trace score', async () => {
    await expectFigures();
    // tD holds two spans of 1.0.0: its trace score counts once.
    const rows = await selectPromptScoreFigures(ctx.clickhouse, {
      workspaceId: tenant.workspaceId,
      versions: [{ name: promptName, version: v1 }],
    });
    const quality = rows.find((r) => r.name === 'quality')!;
    expect(quality.n).toBe(expected().get(`${v1}/quality`)!.length);
    // A score on a span naming no prompt is paired with no version: not even a tombstone is written.
    const paired = await ctx.clickhouse.query({
      query: "SELECT count() AS n FROM prompt_version_scores WHERE workspace_id = {workspaceId:String} AND id = 'a-3'",
      query_params: { workspaceId: tenant.workspaceId },
      format: 'JSONEachRow',
    });
    expect(await paired.json()).toEqual([{ n: 0 }]);
  });

  it('follow corrections, moves, deletes and a span re-sent under another version', async () => {
    // A corrected value; a span score moved to the other version's span; a trace score moved to another trace.
    await sendScores(tenant, [
      score('b-trace', 'quality', 0.2, tB),
      score('a-1', 'quality', 0.4, tA, 'a2'),
      score('c1', 'quality', 0.3, tB),
    ]);
    await settle();
    await expectFigures();
    // tB's span re-sent under 1.1.0: its scores (and the trace scores of tB) change sides.
    await sendTrace(tenant, tB, [{ spanId: 'b1', version: v2, start: at(10, 0) }]);
    await settle();
    await expectFigures();
    // A deleted score; a deleted trace (its spans and scores go).
    expect((await ctx.app.inject({ method: 'DELETE', url: '/api/scores/a-2', headers: tenant.headers })).statusCode).toBe(200);
    scores.delete('a-2');
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${tD}`, headers: tenant.headers })).statusCode).toBe(200);
    for (const key of [...spans.keys()]) if (key.startsWith(`${tD}/`)) spans.delete(key);
    for (const [id, s] of scores) if (s.traceId === tD) scores.delete(id);
    await settle();
    await expectFigures();
  });

  it('count only the spans starting inside the window', async () => {
    await expectFigures({ after: at(9, 30), before: at(11, 0) });
    await expectFigures({ after: at(8, 0), before: at(9, 1) });
  });

  it("never count another workspace's scores", async () => {
    // The other workspace holds the same trace, span and score ids, uncorrected.
    const theirs = await selectPromptScoreFigures(ctx.clickhouse, {
      workspaceId: other.workspaceId,
      versions: [{ name: promptName, version: v1 }],
    });
    const quality = theirs.find((r) => r.name === 'quality')!;
    // 1.0.0 there: a-trace, a-1 (tA), b-trace (tB), d-trace (tD).
    expect(quality.n).toBe(4);
    expect(quality.mean).toBeCloseTo((0.9 + 0.4 + 0.7 + 0.95) / 4, 12);
  });

  it('answers the comparison through HTTP from these rows', async () => {
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/prompt',
      headers: tenant.headers,
      payload: { name: promptName, systemPrompt: 'a' },
    });
    const baselineId = created.json().data.id as number;
    const next = await ctx.app.inject({
      method: 'POST',
      url: `/api/prompt/${baselineId}/versions`,
      headers: tenant.headers,
      payload: { newVersion: v2, changes: { systemPrompt: 'b' } },
    });
    const res = await getJson(ctx, tenant, `/api/prompt/${next.json().data.id}/compare?against=${baselineId}`);
    expect(res.statusCode, res.body).toBe(200);
    const byName = Object.fromEntries(
      (res.json().data.scores as { name: string; subject: { n: number }; baseline: { n: number } }[]).map((s) => [s.name, s]),
    );
    const want = expected();
    for (const name of ['quality', 'speed']) {
      expect(byName[name]!.subject.n).toBe(want.get(`${v2}/${name}`)?.length ?? 0);
      expect(byName[name]!.baseline.n).toBe(want.get(`${v1}/${name}`)?.length ?? 0);
    }
  });

  it('gives the same answers once refilled by its migration', async () => {
    const text = readFileSync(new URL('../../clickhouse/0025_prompt_version_scores.sql', import.meta.url), 'utf8');
    // Its refill of `scores_by_trace`, a table clickhouse/0026 dropped (its views read `score_targets`), is left out.
    const refill = splitStatements(text).filter((s) => s.startsWith('INSERT INTO') && !s.startsWith('INSERT INTO scores_by_trace'));
    expect(refill).toHaveLength(1);
    for (const table of ['prompt_version_scores', 'prompt_spans']) {
      await ctx.clickhouse.command({
        query: `ALTER TABLE ${table} DELETE WHERE workspace_id = {workspaceId:String} SETTINGS mutations_sync = 2`,
        query_params: { workspaceId: tenant.workspaceId },
      });
    }
    expect(await selectPromptScoreFigures(ctx.clickhouse, { workspaceId: tenant.workspaceId, promptName })).toEqual([]);
    for (const statement of refill) {
      for (const rendered of renderClickhouseMigration(statement, { database: 'default' }))
        await ctx.clickhouse.command({ query: rendered });
    }
    await expectFigures();
    await expectFigures({ after: at(9, 30), before: at(11, 0) });
  });
});
