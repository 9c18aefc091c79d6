import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { random } from '../../bench/query-data.js';
import { runItemsMirror } from '../../src/datasets/service/run-items-mirror.js';
import { metricsInEngine, metricsOfItems, type RunReaders } from '../../src/datasets/service/run-figures.js';
import { addWrittenEntry } from '../../src/datasets/tables/run-items-outbox-table.js';
import { runScoresOf } from '../../src/scores/service/run-scores.js';
import { traceFiguresReader } from '../../src/traces/query/trace-figures.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { postScores } from './scores-fixtures.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { createDataset, send } from './datasets-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
let readers: RunReaders;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  readers = { traces: traceFiguresReader(ctx.clickhouse), scores: runScoresOf(ctx.clickhouse, ctx.sql) };
});
afterAll(async () => {
  await ctx?.close();
});

const tones = ['calm', 'curt', 'warm'];
const itemIds = Array.from({ length: 60 }, (_, i) => `item-${String(i).padStart(3, '0')}`);

/** A run over a random share of the items: per item a trace (a random cost or none, a random duration) with random scores. */
async function seedRandomRun(datasetId: string, name: string, rand: () => number, extraName?: string) {
  const run = (await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/runs`, { name })).json().data;
  const present = itemIds.filter(() => rand() < 0.85);
  const traces = present.map(() => ({
    traceId: uniqueId(name),
    source: 'sdk',
    spans: [span({ spanId: 'root', durationMs: Math.round(50 + rand() * 1000), ...(rand() < 0.8 && { costUsd: rand() / 100 }) })],
  }));
  expect((await post(ctx, tenant, traces)).json().data.accepted).toBe(traces.length);
  const times = (max: number) => Array.from({ length: Math.floor(rand() * (max + 1)) });
  const scores = traces.flatMap((t) => [
    ...times(2).map(() => ({ name: 'quality', value: Math.round(rand() * 100) / 10, traceId: t.traceId })),
    ...times(3).map(() => ({ name: 'passed', value: rand() < 0.6, traceId: t.traceId })),
    ...times(3).map(() => ({ name: 'tone', value: tones[Math.floor(rand() * tones.length)], traceId: t.traceId })),
    ...(extraName === undefined ? [] : [{ name: extraName, value: rand(), traceId: t.traceId }]),
  ]);
  expect((await postScores(ctx, tenant, { scores })).statusCode).toBeLessThan(300);
  const items = present.map((datasetItemId, k) => ({ datasetItemId, traceId: traces[k]!.traceId }));
  expect((await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/runs/${run.id}/items`, { items })).statusCode).toBe(200);
  return run.id as string;
}

/** Equal field by field, numbers within a relative 1e-9 (the engine sums in another order than jstat). */
function expectAgreement(actual: unknown, expected: unknown, path = 'metrics') {
  if (typeof expected === 'number' && typeof actual === 'number') {
    expect(Math.abs(actual - expected), path).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
  } else if (expected !== null && typeof expected === 'object') {
    expect(actual !== null && typeof actual === 'object', path).toBe(true);
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected)) expectAgreement((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
  } else {
    expect(actual, path).toEqual(expected);
  }
}

describe('run comparison summed in the engine', () => {
  let datasetId: string;
  let runIds: string[];
  beforeAll(async () => {
    const rand = random(20261127);
    datasetId = await createDataset(ctx, tenant, { name: 'engine-comparison' });
    await send(ctx, tenant, 'POST', `/api/datasets/${datasetId}/items`, { items: itemIds.map((id, i) => ({ id, input: i })) });
    runIds = [
      await seedRandomRun(datasetId, 'a', rand),
      await seedRandomRun(datasetId, 'b', rand),
      await seedRandomRun(datasetId, 'c', rand, 'only-c'),
    ];
    // The traces answered are applied by the writer's next flush: both computations read them after it.
    await ctx.writer.settled();
  });

  it('answers the metrics the direct computation over every item answers, on a random data set', async () => {
    const engine = { clickhouse: ctx.clickhouse, mirror: runItemsMirror(ctx.sql, ctx.clickhouse) };
    const direct = await metricsOfItems(ctx.sql, readers, tenant.workspaceId, runIds);
    const fast = await metricsInEngine(ctx.sql, engine, readers, tenant.workspaceId, runIds);
    expect(fast).not.toBeNull();
    expect(direct.map((m) => `${m.runId} ${m.name} ${m.test}`)).toContain(`${runIds[1]} tone stuart_maxwell`);
    expect(direct.some((m) => m.name === 'only-c' && m.n === 0)).toBe(true);
    expectAgreement(fast, direct);
    const answered = await send(ctx, tenant, 'GET', `/api/datasets/${datasetId}/runs/compare?runs=${runIds.join(',')}`);
    expectAgreement(answered.json().data.metrics, direct);
  });

  it('leaves the answer to the direct computation while a change of the runs is not in the engine', async () => {
    await addWrittenEntry(ctx.sql, tenant.workspaceId, runIds[1]!, null);
    const stalled = { clickhouse: ctx.clickhouse, mirror: { flush: async () => {} } };
    expect(await metricsInEngine(ctx.sql, stalled, readers, tenant.workspaceId, runIds)).toBeNull();
    const failing = { clickhouse: ctx.clickhouse, mirror: { flush: () => Promise.reject(new Error('engine down')) } };
    expect(await metricsInEngine(ctx.sql, failing, readers, tenant.workspaceId, runIds)).toBeNull();
    const current = { clickhouse: ctx.clickhouse, mirror: runItemsMirror(ctx.sql, ctx.clickhouse) };
    expect(await metricsInEngine(ctx.sql, current, readers, tenant.workspaceId, runIds)).not.toBeNull();
  });
});
