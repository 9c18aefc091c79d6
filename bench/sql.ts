/**
 * SQL endpoint benchmark: `npm run bench -- sql [--spans 200000] [--calls 10] [--batch 5000]`.
 *
 * One process, one temporary LOUPE_DATA_DIR: it starts the service (embedded stores), loads the
 * query benchmark's traces (bench/query-data.ts) with span attributes added (`user.id` of 500
 * users, `gen_ai.request.model` on the LLM spans) into the bootstrap workspace through
 * `storeTraces`, then times, as the median of `--calls` calls after one warm-up:
 * - through HTTP, POST /api/sql: an attribute filter and group-by, cost per model per day, p95
 *   latency per model (goal at 1M spans: each ≤ 100 ms);
 * - in the engine, the same attribute query on the attribute map and with JSONExtract on the
 *   span's `detail` JSON, same data, same deduplication (goal: the map ≥ 5× faster).
 */
import type { Trace } from '../src/traces/model/schemas.js';
import { startBenchService } from './bench-service.js';
import { makeQueryTrace, spansPerTrace } from './query-data.js';

const apiKey = 'bench-sql-key-0123456789abcdef01';
const dayMs = 24 * 3600_000;

function parseOptions(args: string[]) {
  const arg = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const spans = Number(arg('spans') ?? 200_000);
  const calls = Number(arg('calls') ?? 10);
  const batch = Number(arg('batch') ?? 5000);
  if (!Number.isInteger(spans) || spans < spansPerTrace || !(calls > 0) || !(batch > 0)) {
    throw new Error('--spans takes a whole number of spans, --calls and --batch positive numbers');
  }
  return { spans, calls, batch };
}

/** The query benchmark's trace n, its spans carrying the attributes data teams filter on. */
function withAttributes(trace: Trace, traceNumber: number): Trace {
  const user = `user-${traceNumber % 500}`;
  return {
    ...trace,
    spans: trace.spans.map((span) => ({
      ...span,
      attributes: {
        'user.id': user,
        ...(span.model !== undefined && { 'gen_ai.request.model': span.model, 'gen_ai.system': span.provider }),
        'service.name': 'support-agent',
      },
    })),
  };
}

/** The median time of `calls` calls after one warm-up. */
export async function median(calls: number, call: () => Promise<void>): Promise<number> {
  await call();
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times.length % 2 ? times[(times.length - 1) / 2]! : (times[times.length / 2 - 1]! + times[times.length / 2]!) / 2;
}

const endpointQueries: Record<string, string> = {
  'attribute filter and group-by': `SELECT attributes['user.id'] AS user, count() AS spans, sum(cost_usd) AS cost
    FROM spans WHERE attributes['gen_ai.request.model'] = 'gpt-4o' GROUP BY user ORDER BY cost DESC LIMIT 20`,
  'cost per model per day': `SELECT toDate(start_time) AS day, model, sum(cost_usd) AS cost FROM spans
    WHERE startsWith(kind, 'llm.') GROUP BY day, model ORDER BY day, model`,
  'p95 latency per model': `SELECT model, quantile(0.95)(duration_ms) AS p95_ms FROM spans
    WHERE startsWith(kind, 'llm.') GROUP BY model ORDER BY model`,
};

/** The attribute query in the engine, on the map and on the JSON text, over the same deduplicated rows. */
const engineQueries = {
  map: `SELECT attributes_map['user.id'] AS user, count() AS spans, sum(cost_usd) AS cost
    FROM spans FINAL WHERE workspace_id = {ws:String} AND is_deleted = 0 AND attributes_map['gen_ai.request.model'] = 'gpt-4o'
    GROUP BY user ORDER BY cost DESC LIMIT 20`,
  json: `SELECT JSONExtractString(detail, 'attributes', 'user.id') AS user, count() AS spans, sum(cost_usd) AS cost
    FROM spans FINAL WHERE workspace_id = {ws:String} AND is_deleted = 0 AND JSONExtractString(detail, 'attributes', 'gen_ai.request.model') = 'gpt-4o'
    GROUP BY user ORDER BY cost DESC LIMIT 20`,
};

export async function run(args: string[]) {
  const options = parseOptions(args);
  const { storeTraces, traceIngestOf } = await import('../src/traces/ingest/ingest.js');
  const { WriteBatcher } = await import('../src/traces/writer/write-batcher.js');
  const { server, store, workspaceId, close } = await startBenchService('sql', apiKey);
  try {
    const rangeEnd = Date.now() - 3600_000;
    const rangeStart = rangeEnd - 30 * dayMs + 2 * 3600_000;
    const traces = options.spans / spansPerTrace;
    const writer = new WriteBatcher(store.client);
    const started = performance.now();
    for (let loaded = 0; loaded < traces;) {
      const count = Math.min(options.batch, traces - loaded);
      const batch = Array.from({ length: count }, (_, i) =>
        withAttributes(makeQueryTrace(loaded + i, rangeStart, rangeEnd - rangeStart), loaded + i),
      );
      await storeTraces(traceIngestOf(writer), workspaceId, batch);
      loaded += count;
      if (loaded % (options.batch * 10) === 0) console.error(`loaded ${loaded * spansPerTrace} spans`);
    }
    const loadSeconds = (performance.now() - started) / 1000;

    const figures: Array<[string, number, string]> = [];
    // Not a goal: HTTP, authentication and the rate limit without ClickHouse, this run's floor.
    const floor = await median(options.calls, async () => {
      await (await fetch(`${server.url}/api/me`, { headers: { 'x-api-key': apiKey } })).text();
    });
    figures.push(['GET /api/me (no ClickHouse: the floor)', floor, '']);
    for (const [name, query] of Object.entries(endpointQueries)) {
      const ms = await median(options.calls, async () => {
        const res = await fetch(`${server.url}/api/sql`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        });
        const body = await res.text();
        if (res.status !== 200) throw new Error(`${name} answered ${res.status}: ${body.slice(0, 300)}`);
      });
      figures.push([`POST /api/sql: ${name}`, ms, ms <= 100 ? '≤ 100 ms' : '≤ 100 ms (miss)']);
      console.error(`${name}: ${ms.toFixed(1)} ms`);
    }
    // Map and JSON calls alternate, so both see the same load on a shared host.
    const engineTimes: Record<keyof typeof engineQueries, number[]> = { map: [], json: [] };
    for (let i = 0; i <= options.calls; i++) {
      for (const name of ['map', 'json'] as const) {
        const started = performance.now();
        await (await store.client.query({ query: engineQueries[name], query_params: { ws: workspaceId }, format: 'JSONEachRow' })).json();
        if (i > 0) engineTimes[name].push(performance.now() - started);
      }
    }
    const middle = (times: number[]) => {
      const sorted = [...times].sort((a, b) => a - b);
      return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
    };
    const engine = { map: middle(engineTimes.map), json: middle(engineTimes.json) };
    console.error(`engine, attribute query: map ${engine.map.toFixed(1)} ms, JSONExtract ${engine.json.toFixed(1)} ms`);
    const speedup = engine.json / engine.map;
    figures.push(['engine: attribute query on attributes_map', engine.map, '']);
    figures.push(['engine: the same with JSONExtract on detail', engine.json, '']);

    console.log(`\n| call | ${options.spans.toLocaleString('en')} spans | goal (at 1M spans) |\n|---|---|---|`);
    for (const [name, ms, goal] of figures) console.log(`| ${name} | ${ms.toFixed(1)} ms | ${goal} |`);
    console.log(`\nMap vs JSONExtract: ${speedup.toFixed(1)}× faster (goal ≥ 5×), same run, same rows.`);
    console.log(
      `Median of ${options.calls} calls after one warm-up. Loading ${options.spans.toLocaleString('en')} spans took ${loadSeconds.toFixed(0)} s (storeTraces, in-process).`,
    );
  } finally {
    await close();
  }
}
