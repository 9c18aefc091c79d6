import jstat from 'jstat';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { postScores } from './scores-fixtures.js';
import { createDataset, send } from './datasets-fixtures.js';

const { jStat } = jstat;

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

// Student's sleep data (paired t: t = 4.0621 for drug 2 − drug 1, df = 9, p = 0.002833).
const drug1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
const drug2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];
const itemIds = drug1.map((_, i) => `item-${String(i).padStart(2, '0')}`);

interface SideSeed {
  extra: number[];
  correct: boolean[];
  durations: number[];
  costs: number[];
  failedTrace?: number;
  itemError?: number;
}

/** A run over the dataset's items: per item a trace (its duration, cost, status), its scores, and the run item. */
async function seedRun(datasetId: string, name: string, side: SideSeed, only = itemIds) {
  const run = (await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/runs`, { name })).json().data;
  const traces = only.map((itemId) => {
    const i = itemIds.indexOf(itemId);
    return {
      traceId: uniqueId(`${name}-${itemId}`),
      source: 'sdk',
      spans: [
        span({ spanId: 'root', durationMs: side.durations[i], costUsd: side.costs[i], status: side.failedTrace === i ? 'error' : 'ok' }),
      ],
    };
  });
  expect((await post(ctx, tenant, traces)).json().data.accepted).toBe(traces.length);
  const scores = traces.flatMap((t, k) => {
    const i = itemIds.indexOf(only[k]!);
    return [
      { name: 'extra', value: side.extra[i], traceId: t.traceId },
      { name: 'correct', value: side.correct[i], traceId: t.traceId, spanId: 'root' },
    ];
  });
  expect((await postScores(ctx, tenant, { scores })).statusCode).toBeLessThan(300);
  const items = traces.map((t, k) => {
    const i = itemIds.indexOf(only[k]!);
    return {
      datasetItemId: only[k],
      traceId: t.traceId,
      output: { answer: `${name}-${i}` },
      ...(side.itemError === i && { error: 'boom' }),
    };
  });
  expect((await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/runs/${run.id}/items`, { items })).json().data.accepted).toBe(
    items.length,
  );
  return run.id as string;
}

const baselineSide: SideSeed = {
  extra: drug1,
  correct: [true, false, false, false, false, false, false, true, true, true],
  durations: [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000],
  costs: [0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01],
  itemError: 3,
};
const subjectSide: SideSeed = {
  extra: drug2,
  correct: [true, true, true, true, true, true, false, true, true, true],
  durations: [110, 190, 330, 380, 520, 610, 640, 900, 950, 5000],
  costs: [0.012, 0.011, 0.013, 0.01, 0.014, 0.012, 0.011, 0.013, 0.015, 0.012],
  failedTrace: 9,
};

/** Quantile by linear interpolation between closest ranks, computed here from the sorted values. */
function quantileOf(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = p * (sorted.length - 1);
  const low = Math.floor(rank);
  return sorted[low]! + (rank - low) * ((sorted[low + 1] ?? sorted[low]!) - sorted[low]!);
}

describe('run figures and comparison', () => {
  let datasetId: string;
  let baseline: string;
  let subject: string;
  beforeAll(async () => {
    datasetId = await createDataset(ctx, tenant, { name: 'run-figures' });
    await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/items`, { items: itemIds.map((id, i) => ({ id, input: i })) });
    baseline = await seedRun(datasetId, 'baseline', baselineSide);
    subject = await seedRun(datasetId, 'subject', subjectSide);
  });

  it("answers a run's per score mean and 95% interval, cost, latency p50/p95 and errors, and its items page by page", async () => {
    const res = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/${baseline}?limit=4`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data).toMatchObject({ id: baseline, name: 'baseline', itemCount: 10 });
    const figures = body.data.figures;
    const n = drug1.length;
    const mean = drug1.reduce((s, v) => s + v, 0) / n;
    const sd = Math.sqrt(drug1.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
    const half = jStat.studentt.inv(0.975, n - 1) * (sd / Math.sqrt(n));
    const extra = figures.scores.find((s: { name: string }) => s.name === 'extra');
    expect(extra).toMatchObject({ dataType: 'numeric', n: 10 });
    expect(extra.mean).toBeCloseTo(0.75, 10);
    expect(extra.ci95.low).toBeCloseTo(mean - half, 10);
    expect(extra.ci95.high).toBeCloseTo(mean + half, 10);
    // 4 of 10 correct: Wilson's interval, computed here.
    const z = jStat.normal.inv(0.975, 0, 1);
    const p = 0.4;
    const centre = (p + z ** 2 / 20) / (1 + z ** 2 / 10);
    const wilsonHalf = (z * Math.sqrt((p * (1 - p)) / 10 + z ** 2 / 400)) / (1 + z ** 2 / 10);
    const correct = figures.scores.find((s: { name: string }) => s.name === 'correct');
    expect(correct).toMatchObject({ dataType: 'boolean', n: 10, mean: 0.4 });
    expect(correct.ci95.low).toBeCloseTo(centre - wilsonHalf, 10);
    expect(figures.costUsd).toBeCloseTo(0.1, 10);
    expect(figures.latencyP50).toBeCloseTo(quantileOf(baselineSide.durations, 0.5), 10);
    expect(figures.latencyP95).toBeCloseTo(quantileOf(baselineSide.durations, 0.95), 10);
    expect(figures).toMatchObject({ items: 10, errors: 1 });

    expect(body.data.items.map((i: { datasetItemId: string }) => i.datasetItemId)).toEqual(itemIds.slice(0, 4));
    expect(body.data.items[3]).toMatchObject({
      output: { answer: 'baseline-3' },
      error: 'boom',
      failed: true,
      costUsd: 0.01,
      latencyMs: 400,
    });
    expect(body.data.items[1].scores).toEqual({ extra: -1.6, correct: 0 });
    expect(body.meta.pagination).toMatchObject({ limit: 4, hasMore: true });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (
        await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/${baseline}?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      seen.push(...page.data.items.map((i: { datasetItemId: string }) => i.datasetItemId));
      cursor = page.meta.pagination.nextCursor;
    } while (cursor);
    expect(seen).toEqual(itemIds);
    const failedTrace = (await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/${subject}`)).json().data;
    expect(failedTrace.figures.errors).toBe(1);
    expect(failedTrace.items[9]).toMatchObject({ error: null, failed: true });
  });

  it('compares runs item by item: the paired t test and McNemar’s, each with its verdict', async () => {
    const res = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare?runs=${baseline},${subject}&limit=5`);
    expect(res.statusCode).toBe(200);
    const { runs, metrics, items } = res.json().data;
    expect(runs.map((r: { id: string }) => r.id)).toEqual([baseline, subject]);
    const metric = (name: string) => metrics.find((m: { name: string }) => m.name === name);

    const extra = metric('extra');
    expect(extra).toMatchObject({
      kind: 'score',
      dataType: 'numeric',
      baselineRunId: baseline,
      runId: subject,
      n: 10,
      test: 'paired_t',
      df: 9,
    });
    expect(extra.difference).toBeCloseTo(1.58, 10);
    expect(extra.statistic).toBeCloseTo(4.0621, 4);
    expect(extra.pValue).toBeCloseTo(0.002833, 6);
    expect(extra.verdict).toBe('better');

    // Discordant pairs: none correct only in the baseline, 5 only in the subject: exact p = 2·(½)^5.
    const correct = metric('correct');
    expect(correct).toMatchObject({ dataType: 'boolean', n: 10, test: 'mcnemar_exact', verdict: 'no significant difference' });
    expect(correct.pValue).toBeCloseTo(2 / 32, 12);
    expect(correct.baselineMean).toBeCloseTo(0.4, 12);
    expect(correct.mean).toBeCloseTo(0.9, 12);

    // Costs up on 9 items of 10: the paired t, computed here; lower is better, so worse.
    const costDifferences = subjectSide.costs.map((c, i) => c - baselineSide.costs[i]!);
    const d = costDifferences.reduce((s, v) => s + v, 0) / 10;
    const sdD = Math.sqrt(costDifferences.reduce((s, v) => s + (v - d) ** 2, 0) / 9);
    const cost = metric('costUsd');
    expect(cost).toMatchObject({ kind: 'cost', higherIsBetter: false, test: 'paired_t', df: 9, verdict: 'worse' });
    expect(cost.statistic).toBeCloseTo(d / (sdD / Math.sqrt(10)), 6);
    expect(cost.pValue).toBeCloseTo(2 * (1 - jStat.studentt.cdf(Math.abs(d / (sdD / Math.sqrt(10))), 9)), 10);
    expect(metric('latencyMs')).toMatchObject({ kind: 'latency', test: 'paired_t', n: 10 });

    expect(items.map((i: { datasetItemId: string }) => i.datasetItemId)).toEqual(itemIds.slice(0, 5));
    expect(items[2].runs[0]).toMatchObject({
      output: { answer: 'baseline-2' },
      scores: { extra: -0.2, correct: 0 },
      costUsd: 0.01,
      latencyMs: 300,
    });
    expect(items[2].runs[1]).toMatchObject({
      output: { answer: 'subject-2' },
      scores: { extra: 1.1, correct: 1 },
      costUsd: 0.013,
      latencyMs: 330,
    });
    expect(res.json().meta.pagination).toMatchObject({ limit: 5, hasMore: true });
  });

  it('pairs only the items both runs have; a third run is compared with the first; a missing item is null', async () => {
    const partial = await seedRun(datasetId, 'partial', baselineSide, itemIds.slice(0, 6));
    const res = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare?runs=${baseline},${subject},${partial}&limit=100`);
    expect(res.statusCode).toBe(200);
    const { metrics, items } = res.json().data;
    const extraPartial = metrics.find((m: { name: string; runId: string }) => m.name === 'extra' && m.runId === partial);
    expect(extraPartial).toMatchObject({ baselineRunId: baseline, n: 6, difference: 0, test: null, verdict: 'no significant difference' });
    expect(metrics.filter((m: { runId: string }) => m.runId === subject)).toHaveLength(4);
    expect(items).toHaveLength(10);
    expect(items[7].runs[2]).toBeNull();
    expect(items[7].runs[1]).not.toBeNull();
  });

  it('answers the side by side page alone (compare/items) with the items and cursors of the full comparison', async () => {
    const runs = (await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs`)).json().data as { id: string; name: string }[];
    const partial = runs.find((r) => r.name === 'partial')!.id;
    const query = `runs=${partial},${subject}`;
    const full = (await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare?${query}&limit=100`)).json().data;
    const pages: unknown[] = [];
    let cursor: string | null = null;
    do {
      const res = await send(
        ctx,
        tenant,
        'GET',
        `/api/datasets/${datasetId}/runs/compare/items?${query}&limit=4${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.data.runs.map((r: { id: string }) => r.id)).toEqual([partial, subject]);
      expect(body.data).not.toHaveProperty('metrics');
      pages.push(...body.data.items);
      cursor = body.meta.pagination.nextCursor;
    } while (cursor);
    expect(pages).toEqual(full.items);
    expect(pages).toHaveLength(10);
    expect(full.items[7].runs[0]).toBeNull();
    const bad = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare/items?${query}&cursor=!!`);
    expect(bad.statusCode).toBe(400);
    const other = await ctx.tenant();
    expect((await send(ctx, other, 'GET', `/api/datasets/${datasetId}/runs/compare/items?${query}`)).statusCode).toBe(404);
  });

  it('refuses bad runs lists with a clear error, and another workspace’s run with 404', async () => {
    const one = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare?runs=${baseline}`);
    expect(one.statusCode).toBe(400);
    expect(one.json().error.code).toBe('VALIDATION_ERROR');
    expect(one.body).toContain('runs');
    const twice = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare?runs=${baseline},${baseline}`);
    expect(twice.statusCode).toBe(400);
    expect(twice.body).toContain('twice');
    const bad = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare?runs=${baseline},nope`);
    expect(bad.statusCode).toBe(400);
    const cursor = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/${baseline}?cursor=!!`);
    expect(cursor.statusCode).toBe(400);
    const other = await ctx.tenant();
    expect((await send(ctx, other, 'GET', `/api/datasets/${datasetId}/runs/compare?runs=${baseline},${subject}`)).statusCode).toBe(404);
    expect((await send(ctx, other, 'GET', `/api/datasets/${datasetId}/runs/${baseline}`)).statusCode).toBe(404);
  });
});

describe('comparison of a categorical score', () => {
  // Baseline category (rows) by subject category (columns) of 38 items: the subject moves items from a to c.
  const table = [
    [6, 9, 1],
    [1, 5, 8],
    [1, 0, 7],
  ];
  const labels = ['a', 'b', 'c'];

  it('answers the Stuart–Maxwell test of marginal homogeneity, an item counting as the category most of its scores have', async () => {
    const pairs = table.flatMap((row, i) => row.flatMap((count, j) => Array.from({ length: count }, () => [labels[i]!, labels[j]!])));
    const ids = pairs.map((_, k) => `tone-${String(k).padStart(2, '0')}`);
    const datasetId = await createDataset(ctx, tenant, { name: 'categorical' });
    await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/items`, { items: ids.map((id) => ({ id, input: id })) });
    const runIds: string[] = [];
    for (const side of [0, 1]) {
      const run = (await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/runs`, { name: `tone-${side}` })).json().data;
      const traces = ids.map((id) => ({ traceId: uniqueId(`tone-${side}-${id}`), source: 'sdk', spans: [span({ spanId: 'root' })] }));
      await post(ctx, tenant, traces);
      // The first item's baseline trace has three tone scores: two of its category, one of another.
      const scores = traces.flatMap((t, k) =>
        side === 0 && k === 0
          ? [pairs[k]![side]!, pairs[k]![side]!, 'c'].map((value) => ({ name: 'tone', value, traceId: t.traceId }))
          : [{ name: 'tone', value: pairs[k]![side]!, traceId: t.traceId }],
      );
      expect((await postScores(ctx, tenant, { scores })).statusCode).toBeLessThan(300);
      const items = ids.map((datasetItemId, k) => ({ datasetItemId, traceId: traces[k]!.traceId }));
      await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/runs/${run.id}/items`, { items });
      runIds.push(run.id);
    }
    const res = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare?runs=${runIds.join(',')}`);
    expect(res.statusCode).toBe(200);
    const tone = res.json().data.metrics.find((m: { name: string }) => m.name === 'tone');
    // Fleiss and Everitt's closed form of the 3×3 statistic, from the margins and the mean off-diagonal counts.
    const rowTotal = (i: number) => table[i]!.reduce((a, b) => a + b, 0);
    const columnTotal = (i: number) => table.reduce((a, r) => a + r[i]!, 0);
    const [d1, d2, d3] = [0, 1, 2].map((i) => rowTotal(i) - columnTotal(i)) as [number, number, number];
    const mean = (i: number, j: number) => (table[i]![j]! + table[j]![i]!) / 2;
    const [n12, n13, n23] = [mean(0, 1), mean(0, 2), mean(1, 2)];
    const statistic = (n23 * d1 ** 2 + n13 * d2 ** 2 + n12 * d3 ** 2) / (2 * (n12 * n23 + n12 * n13 + n13 * n23));
    expect(tone).toMatchObject({
      kind: 'score',
      dataType: 'categorical',
      n: 38,
      baselineMean: null,
      mean: null,
      difference: null,
      test: 'stuart_maxwell',
      df: 2,
    });
    expect(tone.statistic).toBeCloseTo(statistic, 8);
    expect(tone.pValue).toBeCloseTo(Math.exp(-statistic / 2), 8);
    expect(tone.pValue).toBeLessThan(0.05);
    expect(tone.verdict).toBe('different');
  });
});
