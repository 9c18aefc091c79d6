import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { getJson, postScores } from './scores-fixtures.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

// Wikipedia "Welch's t-test", example 1: t = 2.46 for A2 − A1, ν ≈ 25.0, p = 0.021.
const a1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
const a2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;

/** A prompt with versions 1.0.0 and 1.1.0; `calls` spans of each version, scored as given. */
async function seed(tenant: Tenant, name: string) {
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/prompt',
    headers: tenant.headers,
    payload: { name, systemPrompt: 'a' },
  });
  const baselineId = created.json().data.id as number;
  const next = await ctx.app.inject({
    method: 'POST',
    url: `/api/prompt/${baselineId}/versions`,
    headers: tenant.headers,
    payload: { newVersion: '1.1.0', changes: { systemPrompt: 'b', isLatest: true } },
  });
  const subjectId = next.json().data.id as number;
  const sides = [
    { version: '1.0.0', accuracy: a1, thumbs: 45, tone: { x: 10, y: 20 } },
    { version: '1.1.0', accuracy: a2, thumbs: 60, tone: { x: 30, y: 40 } },
  ];
  for (const side of sides) {
    const traceId = uniqueId(`t-${side.version}`);
    const now = Date.now();
    const spans = Array.from({ length: 100 }, (_, i) =>
      span({
        spanId: `s${i}`,
        kind: 'llm.chat',
        promptName: name,
        promptVersion: side.version,
        startTime: new Date(now - 60_000 + i).toISOString(),
        endTime: new Date(now - 59_000 + i * 2).toISOString(),
        durationMs: 1000 + i,
        ...(i === 0 && side.version === '1.1.0' ? { status: 'error' } : {}),
      }),
    );
    expect((await post(ctx, tenant, [{ traceId, source: 'sdk', spans }])).json().data.accepted).toBe(1);
    const categories = Object.entries(side.tone).flatMap(([label, count]) => Array.from({ length: count }, () => label));
    const scores = [
      ...side.accuracy.map((value, i) => ({ name: 'accuracy', value, traceId, spanId: `s${i}` })),
      ...side.accuracy.map((value, i) => ({ name: 'slowness', value, traceId, spanId: `s${i}` })),
      ...Array.from({ length: 100 }, (_, i) => ({ name: 'thumbs', value: i < side.thumbs, traceId, spanId: `s${i}` })),
      ...categories.map((value, i) => ({ name: 'tone', value, traceId, spanId: `s${i}` })),
    ];
    expect((await postScores(ctx, tenant, { scores })).json().data.rejected).toBe(0);
  }
  return { baselineId, subjectId };
}

describe('GET /api/prompt/:id/compare', () => {
  let tenant: Tenant;
  let ids: { baselineId: number; subjectId: number };
  beforeAll(async () => {
    tenant = await ctx.tenant();
    // Lower slowness is better: the same difference is a worse verdict.
    await ctx.app.inject({
      method: 'POST',
      url: '/api/score-configs',
      headers: tenant.headers,
      payload: { name: 'slowness', dataType: 'numeric', higherIsBetter: false },
    });
    ids = await seed(tenant, 'greeter');
  });

  it('answers the figures of both versions and the tests of every score with their verdicts', async () => {
    const res = await getJson(ctx, tenant, `/api/prompt/${ids.subjectId}/compare?against=${ids.baselineId}`);
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data.subject).toMatchObject({ promptId: ids.subjectId, version: '1.1.0', calls: 100, errorRate: 0.01 });
    expect(data.baseline).toMatchObject({ promptId: ids.baselineId, version: '1.0.0', calls: 100, errorRate: 0 });
    expect(data.subject.latencyMs.p50).toBeCloseTo(1049.5, 5);
    const byName = Object.fromEntries(data.scores.map((s: { name: string }) => [s.name, s]));
    expect(Object.keys(byName)).toEqual(['accuracy', 'slowness', 'thumbs', 'tone']);

    const accuracy = byName.accuracy;
    expect(accuracy).toMatchObject({ dataType: 'numeric', test: 'welch_t', verdict: 'better', higherIsBetter: true });
    expect(accuracy.subject.n).toBe(15);
    expect(accuracy.subject.mean).toBeCloseTo(mean(a2), 10);
    expect(accuracy.baseline.mean).toBeCloseTo(mean(a1), 10);
    expect(accuracy.difference).toBeCloseTo(mean(a2) - mean(a1), 10);
    expect(accuracy.statistic).toBeCloseTo(2.46, 2);
    expect(accuracy.df).toBeCloseTo(24.99, 1);
    expect(accuracy.pValue).toBeCloseTo(0.021, 3);
    expect(accuracy.subject.ci95.low).toBeLessThan(mean(a2));
    expect(accuracy.subject.ci95.high).toBeGreaterThan(mean(a2));

    expect(byName.slowness).toMatchObject({ verdict: 'worse', higherIsBetter: false });

    const thumbs = byName.thumbs;
    expect(thumbs).toMatchObject({ dataType: 'boolean', test: 'two_proportions_z', verdict: 'better' });
    expect(thumbs.subject).toMatchObject({ n: 100, mean: 0.6 });
    expect(thumbs.baseline).toMatchObject({ n: 100, mean: 0.45 });
    expect(thumbs.pValue).toBeCloseTo(0.03367, 4);

    const tone = byName.tone;
    expect(tone).toMatchObject({ dataType: 'categorical', test: 'chi_square', df: 1, verdict: 'no significant difference' });
    expect(tone.subject.distribution).toEqual({ x: 30, y: 40 });
    expect(tone.baseline.distribution).toEqual({ x: 10, y: 20 });
    expect(tone.statistic).toBeCloseTo(4 / 12 + 4 / 18 + 4 / 28 + 4 / 42, 8);
    expect(tone.pValue).toBeCloseTo(0.373, 3);
  });

  it('gives each version of the metrics its score means', async () => {
    const res = await getJson(ctx, tenant, `/api/prompt/${ids.subjectId}/metrics`);
    const versions = Object.fromEntries(res.json().data.versions.map((v: { version: string; scores: unknown }) => [v.version, v.scores]));
    expect(versions['1.1.0'].accuracy.n).toBe(15);
    expect(versions['1.1.0'].accuracy.mean).toBeCloseTo(mean(a2), 10);
    expect(versions['1.0.0'].thumbs).toEqual({ n: 100, mean: 0.45 });
  });

  it("never compares another workspace's versions nor counts its scores", async () => {
    const other = await ctx.tenant();
    const theirs = await seed(other, 'greeter');
    expect((await getJson(ctx, other, `/api/prompt/${ids.subjectId}/compare?against=${theirs.baselineId}`)).statusCode).toBe(404);
    expect((await getJson(ctx, tenant, `/api/prompt/${ids.subjectId}/compare?against=${theirs.baselineId}`)).statusCode).toBe(404);
    const mine = (await getJson(ctx, tenant, `/api/prompt/${ids.subjectId}/compare?against=${ids.baselineId}`)).json().data;
    expect(mine.subject.calls).toBe(100);
    expect(mine.scores.find((s: { name: string }) => s.name === 'thumbs').subject.n).toBe(100);
    // The other workspace has no config: its slowness is higher-is-better.
    const their = (await getJson(ctx, other, `/api/prompt/${theirs.subjectId}/compare?against=${theirs.baselineId}`)).json().data;
    expect(their.scores.find((s: { name: string }) => s.name === 'slowness').verdict).toBe('better');
  });

  it('names a bad against', async () => {
    const res = await getJson(ctx, tenant, `/api/prompt/${ids.subjectId}/compare?against=abc`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues[0].path).toBe('querystring.against');
  });
});
