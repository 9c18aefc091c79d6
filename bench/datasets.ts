/**
 * Datasets and experiments benchmark: `npm run bench -- datasets [--items 10000] [--calls 10]
 * [--sdk-items 2000] [--task-ms 2]`.
 *
 * One process, one temporary LOUPE_DATA_DIR: it starts the service (embedded stores), creates
 * a dataset of `--items` items through the API, and two runs of it: per item a trace (one LLM
 * span with a cost and a duration, stored in-process through `storeTraces`), three scores on
 * the trace (numeric `quality`, boolean `correct`, categorical `tone`, through POST
 * /api/scores) and the run item (through the API). Then, as the median of `--calls` calls
 * after one warm-up:
 * - `GET /api/datasets/:id/runs/compare?runs=a,b` (per metric the paired tests over all the
 *   items, and the first page of 100 items side by side; goal ≤ 500 ms);
 * - the side by side view's first page alone, `…/runs/compare/items?runs=a,b` (goal ≤ 100 ms);
 * - `GET /api/me` (no store: this run's floor);
 * - the comparison's metrics alone, in this process: computed over every item (the direct
 *   computation, before) and summed in the engine (after), alternated.
 * Last, the TypeScript SDK's `loupe.experiment` over a dataset of `--sdk-items` items at
 * concurrency 10, its task waiting `--task-ms`, against the same task run bare over the same
 * items with the same 10 workers, in this run: the overhead per item (goal ≤ 2 ms).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Trace } from '../src/traces/model/schemas.js';
import { startBenchService } from './bench-service.js';
import { random } from './query-data.js';
import { median } from './sql.js';

const apiKey = 'bench-datasets-key-0123456789abcdef';
const tones = ['formal', 'neutral', 'casual'] as const;

function parseOptions(args: string[]) {
  const arg = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const options = {
    items: Number(arg('items') ?? 10_000),
    calls: Number(arg('calls') ?? 10),
    sdkItems: Number(arg('sdk-items') ?? 2000),
    taskMs: Number(arg('task-ms') ?? 2),
  };
  if (!Object.values(options).every((v) => Number.isInteger(v) && v > 0)) throw new Error('every option takes a positive whole number');
  return options;
}

/** The median time of each of `work`, called in turn `calls` times after one warm-up of each (so all see the same load). */
async function alternated(calls: number, work: Array<() => Promise<void>>): Promise<number[]> {
  for (const w of work) await w();
  const times = work.map(() => [] as number[]);
  for (let i = 0; i < calls; i++)
    for (const [k, w] of work.entries()) {
      const started = performance.now();
      await w();
      times[k]!.push(performance.now() - started);
    }
  return times.map((t) => {
    const sorted = [...t].sort((a, b) => a - b);
    const mid = sorted.length / 2;
    return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  });
}

export async function run(args: string[]) {
  const options = parseOptions(args);
  const { storeTraces, traceIngestOf } = await import('../src/traces/ingest/ingest.js');
  const { WriteBatcher } = await import('../src/traces/writer/write-batcher.js');
  const { Loupe } = await import('../packages/sdk/src/index.js');
  const { openPostgres } = await import('../src/stores/postgres.js');
  const { metricsInEngine, metricsOfItems } = await import('../src/datasets/service/run-figures.js');
  const { runItemsMirror } = await import('../src/datasets/service/run-items-mirror.js');
  const { traceFiguresReader } = await import('../src/traces/query/trace-figures.js');
  const { runScoresOf } = await import('../src/scores/service/run-scores.js');
  const { dir, server, store, close } = await startBenchService('datasets', apiKey);
  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as { data: any; meta?: any };
  };
  try {
    const workspaceId: string = (await call('GET', '/api/me')).data.workspaceId;
    const writer = new WriteBatcher(store.client);
    const started = performance.now();
    const datasetId: string = (await call('POST', '/api/datasets', { name: 'bench' })).data.id;
    const itemIds = Array.from({ length: options.items }, (_, i) => `item-${String(i).padStart(6, '0')}`);
    for (let i = 0; i < itemIds.length; i += 1000)
      await call('POST', `/api/datasets/${datasetId}/items`, {
        items: itemIds.slice(i, i + 1000).map((id, k) => ({ id, input: { question: `q${i + k}` }, expectedOutput: `a${i + k}` })),
      });
    const runIds: string[] = [];
    for (const [side, name] of ['baseline', 'subject'].entries()) {
      const runId: string = (await call('POST', `/api/datasets/${datasetId}/runs`, { name })).data.id;
      runIds.push(runId);
      const rand = random(side + 1);
      for (let i = 0; i < itemIds.length; i += 1000) {
        const batch = itemIds.slice(i, i + 1000);
        const traces: Trace[] = batch.map((id) => {
          const durationMs = 200 + Math.floor(rand() * 800) + side * 50;
          const start = Date.now() - 3600_000;
          return {
            traceId: `${name}-${id}`,
            source: 'sdk',
            spans: [
              {
                spanId: 'task',
                name: 'task',
                kind: 'llm.chat',
                startTime: new Date(start).toISOString(),
                endTime: new Date(start + durationMs).toISOString(),
                durationMs,
                status: rand() < 0.02 ? 'error' : 'ok',
                model: 'gpt-4o',
                provider: 'openai',
                inputTokens: 200,
                outputTokens: 100,
                costUsd: 0.001 + rand() * 0.001,
              },
            ],
          } as unknown as Trace;
        });
        await storeTraces(traceIngestOf(writer), workspaceId, traces);
        const scores = traces.flatMap((t) => [
          { name: 'quality', value: rand() * 10 + side * 0.2, traceId: t.traceId },
          { name: 'correct', value: rand() < 0.7 + side * 0.05, traceId: t.traceId },
          { name: 'tone', value: tones[Math.floor(rand() * 3)]!, traceId: t.traceId },
        ]);
        for (let s = 0; s < scores.length; s += 1000) await call('POST', '/api/scores', { scores: scores.slice(s, s + 1000) });
        await call('POST', `/api/datasets/${datasetId}/runs/${runId}/items`, {
          items: batch.map((datasetItemId, k) => ({
            datasetItemId,
            traceId: traces[k]!.traceId,
            spanId: 'task',
            output: { answer: `${name} ${k}` },
          })),
        });
      }
      console.error(`loaded run ${name}`);
    }
    const loadSeconds = (performance.now() - started) / 1000;

    const figures: Array<[string, number, string]> = [];
    const floor = await median(options.calls, async () => void (await call('GET', '/api/me')));
    figures.push(['GET /api/me (no store: the floor)', floor, '']);
    const compare = `/api/datasets/${datasetId}/runs/compare?runs=${runIds.join(',')}`;
    const compareMs = await median(options.calls, async () => void (await call('GET', compare)));
    figures.push([`GET …/runs/compare (2 runs of ${options.items.toLocaleString('en')} items, first page of 100)`, compareMs, '≤ 500 ms']);
    const pageMs = await median(
      options.calls,
      async () => void (await call('GET', `/api/datasets/${datasetId}/runs/compare/items?runs=${runIds.join(',')}`)),
    );
    figures.push(['GET …/runs/compare/items (the side by side view, first page of 100)', pageMs, '≤ 100 ms']);
    const runMs = await median(options.calls, async () => void (await call('GET', `/api/datasets/${datasetId}/runs/${runIds[0]}`)));
    figures.push(["GET …/runs/:runId (a run's figures, first page of 100)", runMs, '']);
    // The comparison's metrics alone, in this process on the same stores: the direct computation
    // over every item (before) against the engine's sums of the pairs (after), alternated.
    const pg = await openPostgres({ dataDir: dir });
    try {
      const readers = { traces: traceFiguresReader(store.client), scores: runScoresOf(store.client, pg.sql) };
      const engine = { clickhouse: store.client, mirror: runItemsMirror(pg.sql, store.client) };
      const direct = async () => void (await metricsOfItems(pg.sql, readers, workspaceId, runIds));
      const summed = async () => {
        if ((await metricsInEngine(pg.sql, engine, readers, workspaceId, runIds)) === null) throw new Error('the engine path fell back');
      };
      const [directMs, summedMs] = await alternated(options.calls, [direct, summed]);
      figures.push(["the comparison's metrics, computed over every item (before)", directMs!, '']);
      figures.push(["the comparison's metrics, summed in the engine (after)", summedMs!, '']);
      // The endpoint again, now that the engine has merged what the load wrote.
      const againMs = await median(options.calls, async () => void (await call('GET', compare)));
      figures.push(['GET …/runs/compare again, after the metrics above', againMs, '≤ 500 ms']);
    } finally {
      await pg.sql.end({ timeout: 5 });
    }
    for (const [name, ms] of figures.slice(1)) console.error(`${name}: ${ms.toFixed(1)} ms`);

    // The SDK: the same task bare and inside loupe.experiment, same items, 10 workers each.
    const sdkDataset: string = (await call('POST', '/api/datasets', { name: 'bench-sdk' })).data.id;
    const sdkItems = Array.from({ length: options.sdkItems }, (_, i) => ({ id: `s-${i}`, input: { n: i }, expectedOutput: i * 2 }));
    for (let i = 0; i < sdkItems.length; i += 1000)
      await call('POST', `/api/datasets/${sdkDataset}/items`, { items: sdkItems.slice(i, i + 1000) });
    const task = async (item: { input: unknown }) => {
      await sleep(options.taskMs);
      return (item.input as { n: number }).n * 2;
    };
    const bare = async () => {
      const queue = [...sdkItems];
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
            const output = await task(item);
            void (output === item.expectedOutput);
          }
        }),
      );
      return performance.now() - started;
    };
    const loupe = new Loupe({ apiKey, baseUrl: server.url, env: {} });
    const experiment = async (n: number) => {
      const started = performance.now();
      await loupe.experiment({
        dataset: sdkDataset,
        name: `bench-${n}`,
        concurrency: 10,
        print: () => undefined,
        task,
        evaluators: [(item, output) => ({ name: 'exact', value: output === item.expectedOutput })],
      });
      return performance.now() - started;
    };
    // Alternated, so both see the same load of a shared host; one warm-up each.
    await bare();
    await experiment(0);
    const bareTimes: number[] = [];
    const experimentTimes: number[] = [];
    for (let i = 1; i <= 3; i++) {
      bareTimes.push(await bare());
      experimentTimes.push(await experiment(i));
    }
    await loupe.shutdown();
    const mid = (t: number[]) => [...t].sort((a, b) => a - b)[Math.floor(t.length / 2)]!;
    const perItem = (mid(experimentTimes) - mid(bareTimes)) / options.sdkItems;

    console.log(`\n| call | median | goal |\n|---|---|---|`);
    for (const [name, ms, goal] of figures) console.log(`| ${name} | ${ms.toFixed(1)} ms | ${goal} |`);
    console.log(
      `| loupe.experiment over ${options.sdkItems.toLocaleString('en')} items, concurrency 10, task ${options.taskMs} ms | ${mid(experimentTimes).toFixed(0)} ms (bare task: ${mid(bareTimes).toFixed(0)} ms) | |`,
    );
    console.log(`| loupe.experiment overhead per item | ${perItem.toFixed(2)} ms | ≤ 2 ms |`);
    console.log(
      `\nMedian of ${options.calls} calls after one warm-up (the SDK: of 3 runs, alternated with the bare task, after one of each). Loading took ${loadSeconds.toFixed(0)} s.`,
    );
  } finally {
    await close();
  }
}
