/**
 * Ingest benchmark: `npm run bench -- ingest [--spans N] [--clients 4] [--traces-per-request 100] [--cost-compare]`.
 *
 * `--cost-compare` measures what pricing at ingest costs instead (costRole): LLM spans sent
 * without a cost, ingested with pricing off and on in the same run.
 *
 * 1. Raw engine baseline: a child process inserts the same span and summary rows straight
 *    into the same tables through the ClickHouse client (no HTTP, no validation), with as
 *    many concurrent writers as there are clients.
 * 2. End to end: a child process runs the service (startServer, embedded stores, a temp
 *    LOUPE_DATA_DIR); N concurrent clients here POST 100 traces per request to /api/traces
 *    until the span target is in. The server's peak RSS is read from /proc (VmHWM).
 * Both children use one data directory, one after the other (the engine binds a directory
 * to one process).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillTraceIds, makeBodyTemplate, makeTrace, randomTraceId, spansPerTrace } from './ingest-data.js';

const self = fileURLToPath(import.meta.url);
const adminToken = 'bench-admin-token-0123456789';

interface Options {
  spans: number;
  clients: number;
  tracesPerRequest: number;
  costCompare: boolean;
}

function parseOptions(args: string[]): Options {
  const value = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    const n = i >= 0 ? Number(args[i + 1]) : fallback;
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
    return n;
  };
  return {
    spans: value('spans', 1_000_000),
    clients: value('clients', 4),
    tracesPerRequest: value('traces-per-request', 100),
    costCompare: args.includes('--cost-compare'),
  };
}

/** Runs this file again as a child in the given role; resolves with the messages it sends. */
function child(role: string, env: Record<string, string>, onMessage: (message: any, proc: ChildProcess) => void) {
  const proc = fork(self, ['--role', role], { env: { ...process.env, ...env }, execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  proc.on('message', (message) => onMessage(message, proc));
  return proc;
}

/**
 * The engine's ceiling: the same rows (span rows as the service builds them, and the summary
 * rows), inserted by as many concurrent writers as there are clients, timed on the wall clock.
 * Rows are built once and only re-keyed per batch, so the figure is the client and engine alone.
 */
async function rawRole(options: Options) {
  const { openClickhouse, migrateClickhouse } = await import('../src/stores/clickhouse.js');
  const { toSpanRows, nextVersion, toStoredTime } = await import('../src/traces/rows.js');
  const store = await openClickhouse({ database: 'loupe', dataDir: process.env.BENCH_DIR! });
  await migrateClickhouse(store.client, { database: 'loupe' });
  const base = Date.parse('2025-06-01T12:00:00.000Z');
  const traces = Array.from({ length: options.tracesPerRequest }, (_, i) => makeTrace(String(i).padStart(3, '0'), base + i * 1000));
  const spanRows = toSpanRows('bench-raw', traces);
  const summaries = traces.map((t) => ({
    workspace_id: 'bench-raw', trace_id: t.traceId, name: t.name, session_id: t.sessionId, source: t.source,
    environment: t.environment, status: 'completed', trace_kind: 'agent', start_time: toStoredTime(t.spans[0]!.startTime),
    end_time: toStoredTime(t.spans[0]!.endTime), duration_ms: 4000, model: 'gpt-4o-mini', provider: 'openai',
    input_tokens: 1686, output_tokens: 384, total_tokens: 2070, cost_usd: 0.00048, span_count: 10, error_count: 1, is_deleted: 0,
  }));
  const batches = Math.ceil(options.spans / spansPerTrace / options.tracesPerRequest);
  let next = 0;
  let spans = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      while (next < batches) {
        next++;
        const ids = new Map(traces.map((t) => [t.traceId, randomTraceId()]));
        const version = nextVersion().toString();
        await store.client.insert({
          table: 'spans',
          values: spanRows.map((r) => ({ ...r, trace_id: ids.get(r.trace_id)!, version })),
          format: 'JSONEachRow',
        });
        await store.client.insert({
          table: 'traces',
          values: summaries.map((r) => ({ ...r, trace_id: ids.get(r.trace_id)!, version })),
          format: 'JSONEachRow',
        });
        spans += spanRows.length;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  // Exit once the figure is delivered: the engine's background threads would otherwise keep
  // this process (and the data directory) busy while the server runs.
  process.send!({ spans, seconds }, () => process.exit(0));
}

async function serverRole() {
  const { loadConfig } = await import('../src/config.js');
  const { startServer } = await import('../src/server.js');
  const config = loadConfig({
    LOUPE_DATA_DIR: process.env.BENCH_DIR,
    PORT: '0',
    LOG_LEVEL: 'warn',
    LOUPE_ADMIN_TOKEN: adminToken,
  });
  const server = await startServer(config);
  process.send!({ url: server.url });
  process.on('message', async () => {
    await server.stop();
    process.exit(0);
  });
}

async function admin(url: string, route: string, body: unknown) {
  const res = await fetch(`${url}/api/admin${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-admin-token': adminToken },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: Record<string, string> }).data;
}

/** A workspace key on an enterprise plan with limits far above what the run sends. */
async function benchKey(url: string) {
  const org = await admin(url, '/organizations', { name: 'bench', plan: 'enterprise', rateLimitPerMinute: 1e8, rateLimitPerDay: 1e9 });
  const workspace = await admin(url, `/organizations/${org.id}/workspaces`, { name: 'bench' });
  return (await admin(url, '/api-keys', { scope: 'workspace', organizationId: org.id, workspaceId: workspace.id })).key!;
}

async function endToEnd(url: string, options: Options) {
  const key = await benchKey(url);
  const template = makeBodyTemplate(options.tracesPerRequest, options.costCompare);
  const requests = Math.ceil(options.spans / spansPerTrace / options.tracesPerRequest);
  let next = 0;
  let spans = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      while (next < requests) {
        next++;
        const body = fillTraceIds(template);
        const res = await fetch(`${url}/api/traces`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
        const result = (await res.json()) as { data?: { accepted: number } };
        if (res.status !== 200 || result.data?.accepted !== options.tracesPerRequest) throw new Error(`ingest failed: ${res.status} ${JSON.stringify(result).slice(0, 300)}`);
        spans += options.tracesPerRequest * spansPerTrace;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const list = await fetch(`${url}/api/traces?limit=1`, { headers: { 'x-api-key': key } });
  const total = ((await list.json()) as { meta: { pagination: { total: number } } }).meta.pagination.total;
  if (total !== requests * options.tracesPerRequest) throw new Error(`expected ${requests * options.tracesPerRequest} traces, the list counts ${total}`);
  return { spans, seconds };
}

const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/**
 * `--cost-compare`, in a child process (the engine binds its directory to one process): the
 * ingest path as the routes run it (`ingestTraces`: validation, pricing, rows, insert, summary
 * recompute; no HTTP, which would only dilute the difference) with pricing off and on, in the
 * order off, on, on, off, `clients` callers at a time. The workspace has prices (exact names
 * and regexes that miss gpt-4o-mini), so each span is looked up there before the built-in table.
 */
async function costRole(options: Options) {
  const { openClickhouse, migrateClickhouse } = await import('../src/stores/clickhouse.js');
  const { ingestTraces } = await import('../src/traces/ingest.js');
  const { attachIngestPricing, priceSpan } = await import('../src/traces/cost/pricing.js');
  const { WorkspacePriceIndex } = await import('../src/traces/cost/workspace-prices.js');
  type Book = NonNullable<Parameters<typeof attachIngestPricing>[1]['book']>;
  const store = await openClickhouse({ database: 'loupe', dataDir: process.env.BENCH_DIR! });
  await migrateClickhouse(store.client, { database: 'loupe' });
  const price = (i: number, model: string, matchType: 'exact' | 'regex') => ({
    id: `p${i}`, model, matchType, provider: null, inputPerMillion: 1, outputPerMillion: 2, cacheReadPerMillion: null,
    cacheWritePerMillion: null, validFrom: null, createdAt: new Date(2026, 0, 1 + i).toISOString(),
  });
  const index = new WorkspacePriceIndex([price(1, 'acme-large', 'exact'), price(2, 'acme-small', 'exact'), price(3, 'acme-.*', 'regex'), price(4, 'my-(fine|tuned)-.+', 'regex')]);
  const book = { forWorkspace: async () => index } as unknown as Book;
  const template = makeBodyTemplate(options.tracesPerRequest, true);
  const batches = Math.ceil(options.spans / spansPerTrace / options.tracesPerRequest);
  const round = async (on: boolean) => {
    attachIngestPricing(store.client, { enabled: on, book });
    let next = 0;
    let spans = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: options.clients }, async () => {
        while (next < batches) {
          next++;
          const { traces } = JSON.parse(fillTraceIds(template)) as { traces: unknown[] };
          const result = await ingestTraces(store.client, 'bench-cost', traces);
          if (result.accepted !== options.tracesPerRequest) throw new Error(`ingest failed: ${JSON.stringify(result.errors[0])}`);
          spans += options.tracesPerRequest * spansPerTrace;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { on, spans, seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
  };
  await round(true); // warm-up: JIT, the engine's first parts, the price matches
  const runs = [];
  for (const on of [false, true, true, false, false, true, true, false]) runs.push(await round(on));
  // The price of one span alone, over many calls: the built-in table behind a workspace miss.
  const llm = (JSON.parse(template) as { traces: Array<{ spans: Array<{ kind: string }> }> }).traces[0]!.spans.find((s) => s.kind === 'llm.chat')!;
  const calls = 200_000;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) priceSpan(llm as never, index);
  const microsPerSpan = ((performance.now() - t0) * 1000) / calls;
  const check = priceSpan(llm as never, index);
  await store.close();
  process.send!({ runs, microsPerSpan, check }, () => process.exit(0));
}

async function costCompare(options: Options) {
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-'));
  try {
    const result = await new Promise<{ runs: Array<{ on: boolean; spans: number; seconds: number; cpuSeconds: number }>; microsPerSpan: number; check: unknown }>((resolve, reject) => {
      let figure: any;
      const proc = child('cost', { BENCH_DIR: dir, BENCH_SPANS: String(options.spans), BENCH_CLIENTS: String(options.clients), BENCH_TPR: String(options.tracesPerRequest) }, (message) => (figure = message));
      proc.on('exit', (code) => (code === 0 && figure ? resolve(figure) : reject(new Error(`cost run exited with ${code}`))));
    });
    const rate = (on: boolean) => {
      const picked = result.runs.filter((r) => r.on === on);
      return picked.reduce((n, r) => n + r.spans, 0) / picked.reduce((n, r) => n + r.seconds, 0);
    };
    /** CPU time of the ingesting process (the engine runs in it too) per span: less moved by other load than wall time. */
    const cpuPerSpan = (on: boolean) => {
      const picked = result.runs.filter((r) => r.on === on);
      return (1e6 * picked.reduce((n, r) => n + r.cpuSeconds, 0)) / picked.reduce((n, r) => n + r.spans, 0);
    };
    const [off, on] = [rate(false), rate(true)];
    const [cpuOff, cpuOn] = [cpuPerSpan(false), cpuPerSpan(true)];
    console.log(
      [
        `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${mib(totalmem())} RAM, Node ${process.version}`,
        ...result.runs.map(
          (r, i) => `round ${i + 1}, pricing ${r.on ? 'on ' : 'off'}: ${r.spans} spans in ${r.seconds.toFixed(1)} s = ${Math.round(r.spans / r.seconds)} spans/s, ${((1e6 * r.cpuSeconds) / r.spans).toFixed(0)} µs CPU/span`,
        ),
        `pricing off: ${Math.round(off)} spans/s; on: ${Math.round(on)} spans/s; cost of pricing: ${((100 * (off - on)) / off).toFixed(1)}% of ingest throughput (goal <= 5%)`,
        `CPU per span: off ${cpuOff.toFixed(0)} µs, on ${cpuOn.toFixed(0)} µs: ${((100 * (cpuOn - cpuOff)) / cpuOff).toFixed(1)}% more`,
        `one LLM span priced alone: ${result.microsPerSpan.toFixed(2)} µs (workspace prices missed, then the built-in table): ${JSON.stringify(result.check)}`,
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(args: string[]) {
  const options = parseOptions(args);
  if (options.costCompare) return costCompare(options);
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-'));
  try {
    // The server may open the data directory only once the raw child has exited.
    const raw = await new Promise<{ spans: number; seconds: number }>((resolve, reject) => {
      let figure: { spans: number; seconds: number } | undefined;
      const proc = child('raw', { BENCH_DIR: dir, BENCH_SPANS: String(options.spans), BENCH_CLIENTS: String(options.clients), BENCH_TPR: String(options.tracesPerRequest) }, (message) => (figure = message));
      proc.on('exit', (code) => (code === 0 && figure ? resolve(figure) : reject(new Error(`raw baseline exited with ${code}`))));
    });
    const server = await new Promise<{ url: string; proc: ChildProcess }>((resolve, reject) => {
      const proc = child('server', { BENCH_DIR: dir }, (message, p) => resolve({ url: message.url, proc: p }));
      proc.on('exit', (code) => code !== 0 && reject(new Error(`server exited with ${code}`)));
    });
    let e2e: { spans: number; seconds: number };
    let rss: number;
    try {
      e2e = await endToEnd(server.url, options);
      rss = peakRss(server.proc.pid!);
    } finally {
      server.proc.send('stop');
      await new Promise((resolve) => server.proc.once('exit', resolve));
    }
    const rawRate = raw.spans / raw.seconds;
    const e2eRate = e2e.spans / e2e.seconds;
    console.log(
      [
        `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${mib(totalmem())} RAM, Node ${process.version}`,
        `raw engine baseline (${options.clients} writers): ${raw.spans} spans in ${raw.seconds.toFixed(1)} s = ${Math.round(rawRate)} spans/s`,
        `end to end (${options.clients} clients, ${options.tracesPerRequest} traces/request): ${e2e.spans} spans in ${e2e.seconds.toFixed(1)} s = ${Math.round(e2eRate)} spans/s`,
        `ratio end to end / raw: ${((100 * e2eRate) / rawRate).toFixed(0)}% (goal >= 40%)`,
        `server peak RSS: ${mib(rss)} (goal < 1536 MiB)`,
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const roleIndex = process.argv.indexOf('--role');
if (roleIndex >= 0) {
  const role = process.argv[roleIndex + 1];
  const options = { spans: Number(process.env.BENCH_SPANS ?? 0), clients: Number(process.env.BENCH_CLIENTS ?? 1), tracesPerRequest: Number(process.env.BENCH_TPR ?? 100), costCompare: false };
  (role === 'raw' ? rawRole(options) : role === 'cost' ? costRole(options) : serverRole()).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
