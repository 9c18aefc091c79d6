import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { Session } from 'node:inspector';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { child } from './ingest-child.js';
import { percentile } from './ingest-load.js';
import { benchWorkspaceKey, openBenchStores } from './bench-service.js';

/**
 * Waits until the engine has no merge running (at most 3 minutes), so each shape starts on a
 * settled store rather than paying for the merges of the one before; the seconds it waited.
 */
export async function settleMerges(clickhouse: import('../src/stores/clickhouse.js').ClickHouseClient) {
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
export async function serverRole() {
  const { buildApp } = await import('../src/app.js');
  const { createRateLimiter } = await import('../src/tenancy/service/rate-limit.js');
  const server = await import('../src/server.js');
  const { config, log, stores } = await openBenchStores(process.env.BENCH_DIR);
  // As the service's start does (LOUPE_REQUEST_NICE, default -10; 0 to compare without).
  server.raiseRequestPriority(config, log);
  const sql = stores.postgres.sql;
  const clickhouse = stores.clickhouse.client;
  // The service's own writer, as LOUPE_INGEST_ACK configures it (the write-ahead log by default).
  const writer = server.openWriter(config, stores.clickhouse.writeClient, log);
  const app = await buildApp({ config, sql, clickhouse, writer, log, admit: createRateLimiter(sql).admit });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const key = await benchWorkspaceKey(sql, 'bench-ingest');
  process.send!({ type: 'ready', url, key });
  // How long the service's thread keeps a ready callback waiting, per shape (reset at each 'applied').
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const thread = watchThread(app.server);
  const peaks = memoryPeaks();
  const onMessage = async (message: { type: string }) => {
    if (message.type === 'applied') {
      // Answered is not applied with the log: a shape ends when its last write is in the store.
      const started = performance.now();
      await writer.settled();
      const delay = { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6 };
      loopDelay.reset();
      const service = thread.take();
      process.send!({
        type: 'applied',
        seconds: (performance.now() - started) / 1000,
        counts: writer.counts,
        log: writer.log?.counts,
        delay,
        service,
        ...peaks.take(),
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
      const memory = process.memoryUsage();
      process.send!({
        type: 'parts',
        parts: Object.fromEntries((await result.json<{ table: string; parts: number }>()).map((r) => [r.table, Number(r.parts)])),
        // The process's resident memory now, and what of it is the JS heap and buffers outside it (the rest is mostly the engine's).
        memory: { rss: memory.rss, heap: memory.heapTotal, external: memory.external },
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

/** A process's peak resident set since its start or the last reset (VmHWM), in bytes. */
const peakResidentSet = (pid: number | 'self') =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

/**
 * This process's peak resident set and JS heap (its size, sampled every 100 ms) since the last
 * `take`, in bytes; each `take` starts the next stretch.
 */
function memoryPeaks() {
  let heap = 0;
  setInterval(() => (heap = Math.max(heap, process.memoryUsage().heapTotal)), 100).unref();
  return {
    take(): { peakRss: number; peakHeap: number } {
      const peakRss = peakResidentSet('self');
      // Writing 5 to clear_refs resets the peak to the present resident set (Linux).
      writeFileSync('/proc/self/clear_refs', '5');
      const peakHeap = Math.max(heap, process.memoryUsage().heapTotal);
      heap = 0;
      return { peakRss, peakHeap };
    },
  };
}

/** What the service's thread did since the last `take`: its ingest requests' times and its garbage collections. */
export interface ThreadFigures {
  /** POST requests as the service saw them, from their headers read to their answer written, in ms. */
  requests: { count: number; p50: number; p99: number };
  /** Young-generation collections (scavenges): how many, their total, median and longest pause in ms. */
  scavenges: { count: number; ms: number; p50: number; max: number };
  /** Full collections (mark-compact): how many, their longest pause in ms. */
  full: { count: number; max: number };
}

/**
 * Watches the service's thread: each POST from its 'request' event to its answer's 'finish'
 * (the time the service holds a request, without the wait before its headers are read), and
 * each garbage collection's pause. Tells the service's part of a client's latency from the rest.
 */
function watchThread(server: HttpServer) {
  let requests: number[] = [];
  let scavenges: number[] = [];
  let full: number[] = [];
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return;
    const started = performance.now();
    res.once('finish', () => requests.push(performance.now() - started));
  });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges.push(entry.duration);
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) full.push(entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  return {
    take(): ThreadFigures {
      const figures = {
        requests: { count: requests.length, p50: percentile(requests, 50), p99: percentile(requests, 99) },
        scavenges: {
          count: scavenges.length,
          ms: scavenges.reduce((sum, ms) => sum + ms, 0),
          p50: percentile(scavenges, 50),
          max: Math.max(0, ...scavenges),
        },
        full: { count: full.length, max: Math.max(0, ...full) },
      };
      requests = [];
      scavenges = [];
      full = [];
      return figures;
    },
  };
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

export interface Server {
  url: string;
  key: string;
  proc: ChildProcess;
  /** The active parts of `spans` and `traces`, and the service process's memory now (bytes). */
  parts(): Promise<{ parts: Record<string, number>; memory: { rss: number; heap: number; external: number } }>;
  settle(): Promise<number>;
  /** Waits until every answered write is applied: its seconds, and the writer's counts then. */
  applied(): Promise<{
    seconds: number;
    counts: { flushes: number; flushedRows: number; flushMs: number; insertMs: number };
    /** The service thread's event loop delay since the last call, in ms. */
    delay: { p50: number; p99: number };
    /** The service thread's requests and collections since the last call. */
    service: ThreadFigures;
    /** The write-ahead log's counts so far, if the writer has one. */
    log?: { appends: number; syncs: number; syncMs: number };
    /** The service's peak resident set and JS heap size since the last call, in bytes. */
    peakRss: number;
    peakHeap: number;
  }>;
  /** The service's peak resident set over its whole life so far, in bytes. */
  peakRss(): number;
}

export function startServerChild(dir: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const waiting: Array<(sample: Awaited<ReturnType<Server['parts']>>) => void> = [];
    const settling: Array<(seconds: number) => void> = [];
    const applying: Array<(applied: Awaited<ReturnType<Server['applied']>>) => void> = [];
    // The service resets its peak at each 'applied' (memoryPeaks): the whole life's is the largest of the stretches.
    let peakSoFar = 0;
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
          peakRss: () => Math.max(peakSoFar, peakResidentSet(p.pid!)),
        });
      } else if (message.type === 'parts') waiting.shift()?.({ parts: message.parts, memory: message.memory });
      else if (message.type === 'settled') settling.shift()?.(message.seconds);
      else if (message.type === 'applied') {
        peakSoFar = Math.max(peakSoFar, message.peakRss);
        applying.shift()?.(message);
      }
    });
    proc.on('exit', (code) => code !== 0 && reject(new Error(`server exited with ${code}`)));
  });
}
