/**
 * Ingest benchmark: `npm run bench -- ingest [--preload 1000000] [--spans 300000] [--seconds 60]
 * [--sustain 0] [--read-every 500] [--compare-readers] [--small-inserts] [--cpu-profile <file>]
 * [--fixed-start-times]`; with `--cost-compare`, what pricing at ingest costs instead (ingest-cost.ts).
 *
 * 1. A child process fills the store with `--preload` spans (rows and summaries inserted
 *    directly, another workspace), then measures the raw engine baseline: the bulk shape's
 *    rows (100 traces of 10 spans and their summaries per insert) from 4 concurrent writers,
 *    no HTTP and no validation, `--spans` spans; with `--small-inserts`, then the engine's own
 *    answer to many small inserts: 1 trace of 10 spans an insert from 16 writers, 20 s plain and
 *    20 s with asynchronous inserts (`async_insert`, waiting for the flush as an answer must).
 * 2. A child process runs the service on the same data directory; this process drives, one
 *    after the other, the shapes real clients send:
 *    - bulk: 100 traces x 10 spans a request, 4 clients, `--spans` spans;
 *    - reference client: 1 trace x 10 spans a request (the client's flush), 16 and 64 clients,
 *      `--seconds` each, while a reader in a process of its own times GET /api/traces and
 *      GET /api/traces/:id, a pair every `--read-every` ms (500; 0: back to back), as a few
 *      people's consoles would (against their idle figures, taken before: 30 of each back to
 *      back, the goal's figures; then, for comparison only, the same pairs paced as under load
 *      for 15 s with nothing else running); with
 *      `--compare-readers`, a second 16-client shape times the same reads from this process,
 *      the load generator's, as the benchmark did before;
 *    - OpenTelemetry batch: 512 spans over 64 traces a request as OTLP protobuf, 8 clients,
 *      `--spans` spans or `--seconds`, whichever comes first;
 *    - with `--sustain N`: the 16-client shape for N seconds, the active parts of `spans` and
 *      `traces` read from system.parts every 15 s.
 *    The native shapes' traces start as they are sent, as real clients' do (the newest traces
 *    are the ones being written); with `--fixed-start-times`, at one past date whatever the
 *    time, as the benchmark sent them before 2026-11-26 (new traces then never lead the
 *    newest-first list).
 *    With `--cpu-profile <file>`, the service's thread is profiled over the first 15 s of the
 *    16-client shape and the profile written to the file (`.cpuprofile`, for DevTools or any
 *    reader of V8 profiles).
 *    The server's peak RSS is read from /proc (VmHWM).
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { cpus, tmpdir, totalmem } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillStartTimes, fillTraceIds, makeBodyTemplate, makeTrace, randomTraceId, spansPerTrace, summaryOf } from './ingest-data.js';
import { drive, median, percentile, readPairs, sampleReads, serviceGet, type LoadResult } from './ingest-load.js';
import { exportRequest, spansPerRequest as otlpSpansPerRequest } from './otlp-data.js';
import { serviceNodeFlags } from '../src/node-flags.js';

const self = fileURLToPath(import.meta.url);

interface Options {
  preload: number;
  spans: number;
  seconds: number;
  sustain: number;
  /** Also time the reads from the load generator's own process, in a second 16-client shape. */
  compareReaders: boolean;
  /** Under load, a list and a trace read start every this many ms (at once after a slower pair); 0: back to back. */
  readEvery: number;
  /** Also time the engine's small inserts (1 trace of 10 spans, 16 writers, 20 s), plain and asynchronous. */
  smallInserts: boolean;
  /** Where to write a CPU profile of the service's thread over the first 15 s of the 16-client shape. */
  cpuProfile?: string;
  /** The native shapes' traces start at one past date instead of when they are sent. */
  fixedStartTimes: boolean;
}

function parseOptions(args: string[]): Options {
  const value = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    const n = i >= 0 ? Number(args[i + 1]) : fallback;
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
    return n;
  };
  return {
    preload: value('preload', 1_000_000),
    spans: value('spans', 300_000),
    seconds: value('seconds', 60),
    sustain: value('sustain', 0),
    compareReaders: args.includes('--compare-readers'),
    smallInserts: args.includes('--small-inserts'),
    readEvery: value('read-every', 500),
    fixedStartTimes: args.includes('--fixed-start-times'),
    ...(args.includes('--cpu-profile') && { cpuProfile: path.resolve(args[args.indexOf('--cpu-profile') + 1] ?? 'service.cpuprofile') }),
  };
}

function child(role: string, env: Record<string, string>, onMessage: (message: any, proc: ChildProcess) => void) {
  // The service's process runs with the service's V8 flags (src/node-flags.ts), as npm start does.
  const execArgv = [...(role === 'server' ? serviceNodeFlags : []), '--import', 'tsx'];
  const proc = fork(self, ['--role', role], { env: { ...process.env, ...env }, execArgv, stdio: 'inherit' });
  proc.on('message', (message) => onMessage(message, proc));
  return proc;
}

/** Span rows and summary rows of `traces` traces as the bulk shape sends them, re-keyed per insert. */
async function rawRows(workspaceId: string, traces: number) {
  const { toSpanRows } = await import('../src/traces/rows.js');
  const base = Date.parse('2025-06-01T12:00:00.000Z');
  const made = Array.from({ length: traces }, (_, i) => makeTrace(String(i).padStart(3, '0'), base + i * 1000));
  const spanRows = toSpanRows(workspaceId, made);
  const summaries = made.map((t) => summaryOf(workspaceId, t));
  return { spanRows, summaries };
}

/** Fills the store, then times the raw baseline; sends {preloadSeconds, spans, seconds}. */
async function rawRole(options: Options) {
  const { openClickhouse, migrateClickhouse } = await import('../src/stores/clickhouse.js');
  const { nextVersion } = await import('../src/traces/rows.js');
  const store = await openClickhouse({ database: 'loupe', dataDir: process.env.BENCH_DIR! });
  await migrateClickhouse(store.client, { database: 'loupe' });
  const insertBatches = async (
    workspaceId: string,
    spans: number,
    tracesPerInsert: number,
    writers: number,
    { seconds = Infinity, settings }: { seconds?: number; settings?: Record<string, number> } = {},
  ) => {
    const { spanRows, summaries } = await rawRows(workspaceId, tracesPerInsert);
    const batches = Math.ceil(spans / spansPerTrace / tracesPerInsert);
    let next = 0;
    let done = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        while (next < batches && performance.now() < deadline) {
          next++;
          const ids = new Map(summaries.map((s) => [s.trace_id, randomTraceId()]));
          const version = nextVersion().toString();
          await store.client.insert({
            table: 'spans',
            values: spanRows.map((r) => ({ ...r, trace_id: ids.get(r.trace_id)!, version })),
            format: 'JSONEachRow',
            clickhouse_settings: settings,
          });
          await store.client.insert({
            table: 'traces',
            values: summaries.map((r) => ({ ...r, trace_id: ids.get(r.trace_id)!, version })),
            format: 'JSONEachRow',
            clickhouse_settings: settings,
          });
          done++;
        }
      }),
    );
    return { spans: done * tracesPerInsert * spansPerTrace, seconds: (performance.now() - started) / 1000 };
  };
  const preload = options.preload > 0 ? await insertBatches('bench-preload', options.preload, 1000, 2) : { seconds: 0 };
  const settleSeconds = await settleMerges(store.client);
  const raw = await insertBatches('bench-raw', options.spans, 100, 4);
  // --small-inserts: the engine's own answer to many small inserts, beside the group commit.
  const small = options.smallInserts
    ? {
        sync: await insertBatches('bench-small', options.spans, 1, 16, { seconds: 20 }),
        async: await insertBatches('bench-small-async', options.spans, 1, 16, {
          seconds: 20,
          settings: { async_insert: 1, wait_for_async_insert: 1 },
        }),
      }
    : undefined;
  await store.close();
  process.send!({ preloadSeconds: preload.seconds, settleSeconds, ...raw, small }, () => process.exit(0));
}

/**
 * Waits until the engine has no merge running (at most 3 minutes), so each shape starts on a
 * settled store rather than paying for the merges of the one before; the seconds it waited.
 */
async function settleMerges(clickhouse: import('../src/stores/clickhouse.js').ClickHouseClient) {
  const started = performance.now();
  while (performance.now() - started < 180_000) {
    const result = await clickhouse.query({
      query: 'SELECT count() AS n FROM system.merges WHERE database = currentDatabase()',
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ n: number }>();
    if (Number(row?.n ?? 0) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return (performance.now() - started) / 1000;
}

/** The service with a bench workspace key on an enterprise plan; answers `parts` with the active part counts. */
async function serverRole() {
  const { loadConfig } = await import('../src/config.js');
  const { createLogger, openStores, migrate } = await import('../src/server.js');
  const { buildApp } = await import('../src/app.js');
  const { createRateLimiter } = await import('../src/tenancy/rate-limit.js');
  const tenancy = await import('../src/tenancy/store.js');
  const config = loadConfig({ LOUPE_DATA_DIR: process.env.BENCH_DIR, LOG_LEVEL: 'warn' });
  const log = createLogger(config);
  const stores = await openStores(config, log);
  await migrate(config, stores);
  // As the service's start does (LOUPE_REQUEST_NICE, default -10; 0 to compare without).
  (await import('../src/server.js')).raiseRequestPriority?.(config, log);
  const sql = stores.postgres.sql;
  const clickhouse = stores.clickhouse.client;
  // The service's own writer, as LOUPE_INGEST_ACK configures it (the write-ahead log by default).
  const writer = (await import('../src/server.js')).openWriter(config, stores.clickhouse.writeClient, log);
  const app = await buildApp({ config, sql, clickhouse, writer, log, admit: createRateLimiter(sql).admit });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const org = await tenancy.createOrganization(sql, {
    name: 'bench-ingest',
    plan: 'enterprise',
    rateLimitPerMinute: 1e8,
    rateLimitPerDay: 1e9,
  });
  const workspace = await tenancy.createWorkspace(sql, org.id, 'bench');
  const { key } = await tenancy.createApiKey(sql, { scope: 'workspace', organizationId: org.id, workspaceId: workspace.id });
  process.send!({ type: 'ready', url, key });
  // How long the service's thread keeps a ready callback waiting, per shape (reset at each 'applied').
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const onMessage = async (message: { type: string }) => {
    if (message.type === 'applied') {
      // Answered is not applied with the log: a shape ends when its last write is in the store.
      const started = performance.now();
      await writer.settled();
      const delay = { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6 };
      loopDelay.reset();
      process.send!({
        type: 'applied',
        seconds: (performance.now() - started) / 1000,
        counts: writer.counts,
        log: writer.log?.counts,
        delay,
      });
    } else if (message.type === 'settle') {
      process.send!({ type: 'settled', seconds: await settleMerges(clickhouse) });
    } else if (message.type === 'profile') {
      profileThread((message as { type: string; file: string }).file, 15_000);
    } else if (message.type === 'parts') {
      const result = await clickhouse.query({
        query: `SELECT table, count() AS parts FROM system.parts WHERE active AND database = currentDatabase() AND table IN ('spans', 'traces') GROUP BY table`,
        format: 'JSONEachRow',
      });
      process.send!({
        type: 'parts',
        parts: Object.fromEntries((await result.json<{ table: string; parts: number }>()).map((r) => [r.table, Number(r.parts)])),
      });
    } else {
      await app.close();
      await writer.close();
      await stores.close();
      process.exit(0);
    }
  };
  process.on('message', (message: { type: string }) => void onMessage(message));
}

/** A CPU profile of this thread over the next `ms`, written to `file`. */
function profileThread(file: string, ms: number) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable', () =>
    session.post('Profiler.start', () =>
      setTimeout(
        () =>
          session.post('Profiler.stop', (error, result) => {
            if (error) console.error(error);
            else writeFileSync(file, JSON.stringify(result.profile));
            session.disconnect();
          }),
        ms,
      ),
    ),
  );
}

interface Server {
  url: string;
  key: string;
  proc: ChildProcess;
  parts(): Promise<Record<string, number>>;
  settle(): Promise<number>;
  /** Waits until every answered write is applied: its seconds, and the writer's counts then. */
  applied(): Promise<{
    seconds: number;
    counts: { flushes: number; flushedRows: number; flushMs: number; insertMs: number };
    /** The service thread's event loop delay since the last call, in ms. */
    delay: { p50: number; p99: number };
    /** The write-ahead log's counts so far, if the writer has one. */
    log?: { appends: number; syncs: number; syncMs: number };
  }>;
}

function startServerChild(dir: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const waiting: Array<(parts: Record<string, number>) => void> = [];
    const settling: Array<(seconds: number) => void> = [];
    const applying: Array<(applied: Awaited<ReturnType<Server['applied']>>) => void> = [];
    const proc = child('server', { BENCH_DIR: dir }, (message, p) => {
      if (message.type === 'ready') {
        resolve({
          url: message.url,
          key: message.key,
          proc: p,
          parts: () =>
            new Promise((done) => {
              waiting.push(done);
              p.send({ type: 'parts' });
            }),
          settle: () =>
            new Promise((done) => {
              settling.push(done);
              p.send({ type: 'settle' });
            }),
          applied: () =>
            new Promise((done) => {
              applying.push(done);
              p.send({ type: 'applied' });
            }),
        });
      } else if (message.type === 'parts') waiting.shift()?.(message.parts);
      else if (message.type === 'settled') settling.shift()?.(message.seconds);
      else if (message.type === 'applied') applying.shift()?.(message);
    });
    proc.on('exit', (code) => code !== 0 && reject(new Error(`server exited with ${code}`)));
  });
}

/**
 * The clients' connections: node:http with keep-alive, as a real SDK's exporter keeps its
 * connection. fetch cost the load generator 30-45% of a core at 16 clients of the
 * small-payload shape, taken from the service on a 2-core machine (docs/benchmarks.md).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(server: Server, url: string, body: string | Uint8Array, contentType: string, expect: (text: string) => boolean) {
  return new Promise<void>((resolve, reject) => {
    const req = http.request(
      `${server.url}${url}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': contentType, 'x-api-key': server.key, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200 || !expect(text)) reject(new Error(`${url} answered ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve();
        });
      },
    );
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : Buffer.from(body));
  });
}

/**
 * A shape's figure counts until its last write is applied, not only answered: with the
 * write-ahead log the answer comes first, and the spans still to apply would flatter the rate.
 */
async function untilApplied(server: Server, load: Promise<LoadResult>): Promise<LoadResult> {
  const { counts: beforeCounts, log: beforeLog } = await server.applied();
  const before = { ...beforeCounts, log: beforeLog };
  const result = await load;
  const { seconds, counts, delay, log } = await server.applied();
  const flushes = counts.flushes - before.flushes;
  return {
    ...result,
    seconds: result.seconds + seconds,
    applyingSeconds: seconds,
    loopDelay: delay,
    ...(log &&
      before.log && {
        logSyncs: { count: log.syncs - before.log.syncs, ms: (log.syncMs - before.log.syncMs) / (log.syncs - before.log.syncs) },
      }),
    flushes: {
      count: flushes,
      rows: (counts.flushedRows - before.flushedRows) / flushes,
      ms: (counts.flushMs - before.flushMs) / flushes,
      insertMs: (counts.insertMs - before.insertMs) / flushes,
    },
  };
}

const nativeLoad = (server: Server, tracesPerRequest: number, clients: number, maxSpans: number, maxSeconds: number, fixed: boolean) => {
  const template = makeBodyTemplate(tracesPerRequest);
  const body = fixed ? () => fillTraceIds(template) : () => fillTraceIds(fillStartTimes(template, Date.now()));
  return untilApplied(
    server,
    drive({
      clients,
      spansPerRequest: tracesPerRequest * spansPerTrace,
      maxSpans,
      maxSeconds,
      send: () => post(server, '/api/traces', body(), 'application/json', (t) => t.includes(`"accepted":${tracesPerRequest},`)),
    }),
  );
};

async function otelLoad(server: Server, options: Options) {
  const { encodeProtobufRequest } = await import('../src/traces/otlp/protobuf.js');
  const clients = 8;
  // Encoded before the clock starts: the figure is the server's. The clients may start one
  // request each past the span target (drive counts answered spans), so a body for each.
  const requests = Math.ceil(options.spans / otlpSpansPerRequest) + clients;
  const bodies = Array.from({ length: requests }, (_, r) => encodeProtobufRequest(exportRequest(7, r) as never));
  return untilApplied(
    server,
    drive({
      clients,
      spansPerRequest: otlpSpansPerRequest,
      maxSpans: options.spans,
      maxSeconds: options.seconds,
      send: (_client, request) => post(server, '/api/traces/otlp/v1/traces', bodies[request]!, 'application/x-protobuf', () => true),
    }),
  );
}

/**
 * Times GET /api/traces and GET /api/traces/:id from this process, one read at a time: `sample`
 * answers `count` of each; `start` reads list then trace until `stop`, then answers every time.
 */
async function readerRole() {
  const { url, key, traceId, interval } = JSON.parse(process.env.BENCH_READER!) as {
    url: string;
    key: string;
    traceId: string;
    interval: number;
  };
  const get = serviceGet(url, key);
  const list = get('/api/traces');
  const detail = get(`/api/traces/${traceId}`);
  let stopping = false;
  const onMessage = async (message: { type: string; count?: number }) => {
    if (message.type === 'sample') {
      process.send!({
        type: 'sampled',
        list: await sampleReads(list, { count: message.count }),
        detail: await sampleReads(detail, { count: message.count }),
      });
    } else if (message.type === 'start') {
      stopping = false;
      process.send!({ type: 'sampled', ...(await readPairs({ list, detail }, interval, () => stopping)) });
    } else if (message.type === 'stop') stopping = true;
    else process.exit(0);
  };
  process.on('message', (message: { type: string; count?: number }) => void onMessage(message));
  process.send!({ type: 'ready' });
}

interface ReaderTimes {
  list: number[];
  detail: number[];
}

async function startReader(url: string, key: string, traceId: string, interval: number) {
  const answers: Array<(times: ReaderTimes) => void> = [];
  let ready: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const proc = child('reader', { BENCH_READER: JSON.stringify({ url, key, traceId, interval }) }, (message) => {
    if (message.type === 'ready') ready();
    else if (message.type === 'sampled') answers.shift()?.(message);
  });
  await started;
  const ask = (message: object) =>
    new Promise<ReaderTimes>((resolve) => {
      answers.push(resolve);
      proc.send(message);
    });
  return {
    /** Medians of `count` reads of each, one after the other. */
    async sample(count: number) {
      return medians(await ask({ type: 'sample', count }));
    },
    /** Every read's time while `load` runs. */
    async sampleUntil(load: Promise<unknown>): Promise<ReaderTimes> {
      const times = ask({ type: 'start' });
      await load.catch(() => undefined);
      proc.send({ type: 'stop' });
      return times;
    },
    close: () => proc.send({ type: 'exit' }),
  };
}

const medians = (times: ReaderTimes) => ({ list: median(times.list), detail: median(times.detail) });
const rate = (r: LoadResult) => r.spans / r.seconds;
const ms = (n: number) => `${n.toFixed(1)} ms`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

export async function run(args: string[]) {
  if (args.includes('--cost-compare')) return (await import('./ingest-cost.js')).run(args.filter((a) => a !== '--cost-compare'));
  const options = parseOptions(args);
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-'));
  const lines = [`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${mib(totalmem())} RAM, Node ${process.version}`];
  try {
    type Timed = { spans: number; seconds: number };
    type RawFigures = Timed & { preloadSeconds: number; settleSeconds: number; small?: { sync: Timed; async: Timed } };
    const raw = await new Promise<RawFigures>((resolve, reject) => {
      let figure: RawFigures | undefined;
      const proc = child('raw', { BENCH_DIR: dir, BENCH_OPTIONS: JSON.stringify(options) }, (message) => (figure = message));
      proc.on('exit', (code) => (code === 0 && figure ? resolve(figure) : reject(new Error(`raw baseline exited with ${code}`))));
    });
    lines.push(
      `store preloaded with ${options.preload} spans in ${raw.preloadSeconds.toFixed(0)} s, merges settled ${raw.settleSeconds.toFixed(0)} s later`,
    );
    // Every shape starts on a settled store (no merge running), not paying for the one before.
    const settled: number[] = [];
    const rawRate = raw.spans / raw.seconds;
    const server = await startServerChild(dir);
    try {
      settled.push(await server.settle());
      const bulk = await nativeLoad(server, 100, 4, options.spans, Infinity, options.fixedStartTimes);
      const traceId = /"traceId":"([0-9a-f]{32})"/.exec(fillTraceIds(makeBodyTemplate(1)))![1]!;
      await post(
        server,
        '/api/traces',
        JSON.stringify({ traces: [makeTrace(traceId, Date.parse('2025-06-01T12:00:00Z'))] }),
        'application/json',
        () => true,
      );
      const get = serviceGet(server.url, server.key);
      settled.push(await server.settle());
      // Reads are timed from a process of their own, as a person's browser would send them: a
      // reader inside the load generator would also time its own event loop, busy with the
      // clients' requests. With --compare-readers, the figures from this process follow.
      const reader = await startReader(server.url, server.key, traceId, options.readEvery);
      const idle = await reader.sample(30);
      // The same reads paced as under load, nothing else running: the figures above are of
      // back-to-back reads, each finding what the last one read still in the caches.
      const idlePaced =
        options.readEvery > 0 ? medians(await reader.sampleUntil(new Promise((resolve) => setTimeout(resolve, 15_000)))) : undefined;
      const idleInline = options.compareReaders
        ? {
            list: median(await sampleReads(get('/api/traces'), { count: 30 })),
            detail: median(await sampleReads(get(`/api/traces/${traceId}`), { count: 30 })),
          }
        : undefined;
      /** The shape at `clients`, with reads timed from the reader's process or, `inline`, from this one. */
      const underLoad = async (clients: number, seconds: number, inline = false) => {
        let done = false;
        const load = nativeLoad(server, 1, clients, Infinity, seconds, options.fixedStartTimes).finally(() => (done = true));
        if (clients === 16 && !inline && options.cpuProfile) server.proc.send({ type: 'profile', file: options.cpuProfile });
        if (!inline) {
          const reads = await reader.sampleUntil(load);
          return { load: await load, ...medians(reads) };
        }
        const reads = await readPairs({ list: get('/api/traces'), detail: get(`/api/traces/${traceId}`) }, options.readEvery, () => done);
        return { load: await load, ...medians(reads) };
      };
      const c16 = await underLoad(16, options.seconds);
      settled.push(await server.settle());
      let c16Inline: Awaited<ReturnType<typeof underLoad>> | undefined;
      if (idleInline) {
        c16Inline = await underLoad(16, options.seconds, true);
        settled.push(await server.settle());
      }
      const c64 = await underLoad(64, options.seconds);
      settled.push(await server.settle());
      const otel = await otelLoad(server, options);
      const shape = (name: string, r: LoadResult) =>
        `${name.padEnd(44)} ${String(Math.round(rate(r))).padStart(7)} spans/s  p50 ${ms(percentile(r.latenciesMs, 50))}  p99 ${ms(percentile(r.latenciesMs, 99))}  (${r.spans} spans, ${r.seconds.toFixed(0)} s${r.applyingSeconds === undefined ? '' : `, the last applied ${r.applyingSeconds.toFixed(1)} s after its answer`}${r.flushes ? `; ${r.flushes.count} flushes of ${r.flushes.rows.toFixed(0)} spans, ${r.flushes.ms.toFixed(0)} ms each (span insert ${r.flushes.insertMs.toFixed(0)})` : ''}${r.loopDelay ? `; service event loop delay p50 ${ms(r.loopDelay.p50)}, p99 ${ms(r.loopDelay.p99)}` : ''}${r.logSyncs ? `; ${r.logSyncs.count} log syncs of ${ms(r.logSyncs.ms)}` : ''})`;
      lines.push(
        `raw engine insert, bulk rows, 4 writers:    ${String(Math.round(rawRate)).padStart(7)} spans/s  (${raw.spans} spans, ${raw.seconds.toFixed(0)} s)`,
        ...(raw.small
          ? [
              `raw engine, 1 trace x 10 spans an insert, 16 writers: ${Math.round(raw.small.sync.spans / raw.small.sync.seconds)} spans/s; with async_insert=1, wait_for_async_insert=1: ${Math.round(raw.small.async.spans / raw.small.async.seconds)} spans/s (20 s each)`,
            ]
          : []),
        shape('bulk: 100 traces x 10 spans, 4 clients:', bulk),
        shape('reference client: 1 x 10 spans, 16 clients:', c16.load),
        shape('reference client: 1 x 10 spans, 64 clients:', c64.load),
        shape('OTel batch: 512 spans protobuf, 8 clients:', otel),
        `bulk / raw engine:            ${((100 * rate(bulk)) / rawRate).toFixed(0)}% (goal >= 50%)`,
        `16 clients / bulk:            ${((100 * rate(c16.load)) / rate(bulk)).toFixed(0)}% (goal >= 50%), p99 ${ms(percentile(c16.load.latenciesMs, 99))} (goal <= 100 ms)`,
        `64 clients / 16 clients:      ${((100 * rate(c64.load)) / rate(c16.load)).toFixed(0)}% (goal >= 100%)`,
        `GET /api/traces median:       idle ${ms(idle.list)}, under 16 clients ${ms(c16.list)} (${(c16.list / idle.list).toFixed(1)}x, goal <= 2x)`,
        `GET /api/traces/:id median:   idle ${ms(idle.detail)}, under 16 clients ${ms(c16.detail)} (${(c16.detail / idle.detail).toFixed(1)}x, goal <= 2x)`,
        `  (reads timed from a process of their own, a list then a trace ${options.readEvery > 0 ? `every ${options.readEvery} ms` : 'back to back'}, for the whole shape)`,
        ...(idlePaced
          ? [
              `  idle, paced as under load for 15 s (not the goal's figure): list ${ms(idlePaced.list)} (${(c16.list / idlePaced.list).toFixed(1)}x), trace ${ms(idlePaced.detail)} (${(c16.detail / idlePaced.detail).toFixed(1)}x)`,
            ]
          : []),
      );
      if (idleInline && c16Inline)
        lines.push(
          `the same reads timed from the load generator's process (a second 16-client shape, ${Math.round(rate(c16Inline.load))} spans/s):`,
          `  GET /api/traces median:     idle ${ms(idleInline.list)}, under 16 clients ${ms(c16Inline.list)} (${(c16Inline.list / idleInline.list).toFixed(1)}x)`,
          `  GET /api/traces/:id median: idle ${ms(idleInline.detail)}, under 16 clients ${ms(c16Inline.detail)} (${(c16Inline.detail / idleInline.detail).toFixed(1)}x)`,
        );
      lines.push(`waits for merges to settle before the shapes: ${settled.map((n) => `${n.toFixed(0)} s`).join(', ')}`);
      if (options.sustain > 0) {
        await server.settle();
        const samples: string[] = [];
        const started = performance.now();
        let done = false;
        const load = nativeLoad(server, 1, 16, Infinity, options.sustain, options.fixedStartTimes).finally(() => (done = true));
        while (!done) {
          const parts = await server.parts();
          samples.push(`${Math.round((performance.now() - started) / 1000)}s spans=${parts.spans ?? 0} traces=${parts.traces ?? 0}`);
          await new Promise((r) => setTimeout(r, 15_000));
        }
        lines.push(shape(`sustained ${options.sustain} s, 16 clients:`, await load), `active parts over time: ${samples.join(', ')}`);
      }
      reader.close();
      lines.push(`server peak RSS: ${mib(peakRss(server.proc.pid!))} (goal < 1536 MiB)`);
    } finally {
      server.proc.send({ type: 'stop' });
      await new Promise((resolve) => server.proc.once('exit', resolve));
    }
    console.log(lines.join('\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const roleIndex = process.argv.indexOf('--role');
if (roleIndex >= 0) {
  const role = process.argv[roleIndex + 1];
  const options = JSON.parse(process.env.BENCH_OPTIONS ?? '{}') as Options;
  (role === 'raw' ? rawRole(options) : role === 'reader' ? readerRole() : serverRole()).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
