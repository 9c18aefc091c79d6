/**
 * Query benchmark: `npm run bench -- query [--spans 1000000,10000000] [--calls 20] [--batch 5000]`.
 *
 * One process, one temporary LOUPE_DATA_DIR (the embedded engine binds one directory per
 * process): it starts the service (startServer, embedded stores), loads traces into the
 * bootstrap workspace through `storeTraces` (the ingest path minus HTTP and validation: the
 * same span rows and the same in-engine summary recompute), and times each endpoint through
 * HTTP: one warm-up call, then the median of `--calls` calls, once the import's merges have
 * settled. Sizes are reached one after the other by adding traces, every size spread over the
 * last 30 days.
 */
import type { ClickHouseClient } from '../src/stores/clickhouse.js';
import { startBenchService } from './bench-service.js';
import { bigSessionId, makeQueryTrace, spansPerTrace } from './query-data.js';

const apiKey = 'bench-query-key-0123456789abcdef';
const dayMs = 24 * 3600_000;

interface Options {
  spans: number[];
  calls: number;
  batch: number;
}

function parseOptions(args: string[]): Options {
  const arg = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const spans = (arg('spans') ?? '1000000,10000000').split(',').map(Number);
  const calls = Number(arg('calls') ?? 20);
  const batch = Number(arg('batch') ?? 5000);
  if (spans.some((n) => !Number.isInteger(n) || n < spansPerTrace) || !(calls > 0) || !(batch > 0)) {
    throw new Error('--spans takes whole numbers (comma separated), --calls and --batch positive numbers');
  }
  return { spans: [...spans].sort((a, b) => a - b), calls, batch };
}

/** Not a goal: HTTP, authentication and the envelope without ClickHouse, this run's floor on this machine. */
const floorCall = 'GET /api/me (no ClickHouse: the floor)';

/** Ten pages of the newest-first list, each after the previous page's nextCursor; the figure is per page. */
const walkCall = 'cursor walk of GET /api/traces, 10 pages (per page)';
const walkPages = 10;

/** Goals of the issue, in milliseconds, at 1M and 10M spans. */
const goals: Record<string, [number, number]> = {
  'GET /api/traces (default)': [50, 100],
  'GET /api/traces?status=error': [100, 250],
  'GET /api/traces?sessionId=…': [30, 60],
  'GET /api/traces/:id': [20, 30],
  'GET /api/traces/stats?groupBy=model': [150, 600],
  'GET /api/traces/analytics (30 days)': [300, 1200],
  'GET /api/sessions': [50, 150],
  'GET /api/sessions/:id (20,000 traces, first page)': [50, 50],
  'GET /api/users': [50, 150],
  'GET /api/traces/stats?groupBy=user': [50, 150],
  'GET /api/traces?userId=…&tag=…&minCostUsd=…': [50, 150],
  'GET /api/traces?sort=-costUsd': [50, 150],
  [walkCall]: [50, 150],
};

/** Waits until no merge runs in the store (two looks a second apart), at most two minutes; the seconds waited. */
async function mergesSettled(client: ClickHouseClient): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  while (quiet < 2 && performance.now() - started < 120_000) {
    const result = await client.query({
      query: 'SELECT count() AS n FROM system.merges WHERE database = currentDatabase()',
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ n: number }>();
    quiet = row?.n === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return (performance.now() - started) / 1000;
}

/** The first call (cold caches) and the median of the next ones. */
async function fetchOk(url: string): Promise<string> {
  const res = await fetch(url, { headers: { 'x-api-key': apiKey } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${body.slice(0, 300)}`);
  return body;
}

async function time(url: string, calls: number): Promise<{ first: number; median: number }> {
  const call = async () => {
    const started = performance.now();
    if (url.startsWith('walk:')) {
      const first = url.slice('walk:'.length);
      let next = first;
      for (let page = 0; page < walkPages; page++) {
        const cursor: string | null = JSON.parse(await fetchOk(next)).meta.pagination.nextCursor;
        if (cursor === null) throw new Error(`${first}: the walk ended after ${page + 1} pages`);
        next = `${first}${first.includes('?') ? '&' : '?'}cursor=${cursor}`;
      }
      return (performance.now() - started) / walkPages;
    }
    await fetchOk(url);
    return performance.now() - started;
  };
  const first = await call();
  const times: number[] = [];
  for (let i = 0; i < calls; i++) times.push(await call());
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[(times.length - 1) / 2]! : (times[times.length / 2 - 1]! + times[times.length / 2]!) / 2;
  return { first, median };
}

export async function run(args: string[]) {
  const options = parseOptions(args);
  const { storeTraces, traceIngestOf } = await import('../src/traces/ingest/ingest.js');
  const { WriteBatcher } = await import('../src/traces/writer/write-batcher.js');
  const { server, store, workspaceId, close } = await startBenchService('query', apiKey, { raiseLimits: true });
  const writer = new WriteBatcher(store.client);
  try {
    const rangeEnd = Date.now() - 3600_000;
    const rangeStart = rangeEnd - 30 * dayMs + 2 * 3600_000;
    // Each session starts at a random time of the range, so every size covers all 30 days.
    const maxTraces = options.spans.at(-1)! / spansPerTrace;
    let loaded = 0;
    const rows: Array<{ spans: number; loadSeconds: number; figures: Record<string, number> }> = [];
    for (const target of options.spans) {
      const started = performance.now();
      const traces = target / spansPerTrace;
      while (loaded < traces) {
        const count = Math.min(options.batch, traces - loaded);
        const batch = Array.from({ length: count }, (_, i) => makeQueryTrace(loaded + i, rangeStart, rangeEnd - rangeStart));
        await storeTraces(traceIngestOf(writer), workspaceId, batch);
        loaded += count;
        if (loaded % (options.batch * 20) === 0) console.error(`loaded ${loaded * spansPerTrace} spans`);
      }
      const loadSeconds = (performance.now() - started) / 1000;
      // The import's merges would time the engine merging, not the reads: let them settle first.
      const settleSeconds = await mergesSettled(store.client);
      console.error(`${target} spans: merges settled after ${settleSeconds.toFixed(0)} s`);
      const sample = makeQueryTrace(Math.floor(traces / 2), rangeStart, rangeEnd - rangeStart);
      const base = server.url;
      const urls: Record<string, string> = {
        [floorCall]: `${base}/api/me`,
        'GET /api/traces (default)': `${base}/api/traces`,
        'GET /api/traces?status=error': `${base}/api/traces?status=error`,
        'GET /api/traces?sessionId=…': `${base}/api/traces?sessionId=${encodeURIComponent(sample.sessionId!)}`,
        'GET /api/traces/:id': `${base}/api/traces/${sample.traceId}`,
        'GET /api/traces/stats?groupBy=model': `${base}/api/traces/stats?groupBy=model`,
        'GET /api/traces/analytics (30 days)': `${base}/api/traces/analytics`,
        'GET /api/sessions': `${base}/api/sessions`,
        'GET /api/sessions/:id (20,000 traces, first page)': `${base}/api/sessions/${bigSessionId}`,
        'GET /api/users': `${base}/api/users`,
        'GET /api/traces/stats?groupBy=user': `${base}/api/traces/stats?groupBy=user`,
        'GET /api/traces?userId=…&tag=…&minCostUsd=…': `${base}/api/traces?userId=${encodeURIComponent(sample.userId!)}&tag=${encodeURIComponent(sample.tags![0]!)}&minCostUsd=0.01`,
        'GET /api/traces?sort=-costUsd': `${base}/api/traces?sort=-costUsd`,
        [walkCall]: `walk:${base}/api/traces`,
      };
      const figures: Record<string, number> = {};
      for (const [name, url] of Object.entries(urls)) {
        const { first, median } = await time(url, options.calls);
        figures[name] = median;
        console.error(`${target} spans: ${name} ${median.toFixed(1)} ms (first call ${first.toFixed(0)} ms)`);
      }
      rows.push({ spans: target, loadSeconds, figures });
    }
    printTable(rows, maxTraces);
  } finally {
    await close();
  }
}

function printTable(rows: Array<{ spans: number; loadSeconds: number; figures: Record<string, number> }>, maxTraces: number) {
  const header = ['call', ...rows.flatMap((r) => [`${(r.spans / 1e6).toLocaleString('en')}M spans`, 'goal'])];
  console.log(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
  const floor = rows.flatMap((r) => [`${r.figures[floorCall]!.toFixed(1)} ms`, '']);
  console.log(`| ${floorCall} | ${floor.join(' | ')} |`);
  for (const name of Object.keys(goals)) {
    const cells = rows.flatMap((r) => {
      const goal = goals[name]![r.spans >= 10_000_000 ? 1 : 0];
      const figure = r.figures[name]!;
      return [`${figure.toFixed(1)} ms${figure > goal ? ' (miss)' : ''}`, `≤ ${goal} ms`];
    });
    console.log(`| ${name} | ${cells.join(' | ')} |`);
  }
  console.log(
    `\nMedian of the calls after one warm-up, through HTTP on the embedded engine; up to ${maxTraces.toLocaleString('en')} traces.`,
  );
  for (const r of rows)
    console.log(`Loading up to ${r.spans.toLocaleString('en')} spans took ${r.loadSeconds.toFixed(0)} s (storeTraces, in-process).`);
}
