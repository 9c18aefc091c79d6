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
 *      for 15 s with nothing else running, and 30 of each once the 16-client shape ended, over
 *      the workspace it grew); with
 *      `--compare-readers`, a second 16-client shape times the same reads from this process,
 *      the load generator's, as the benchmark did before;
 *    - OpenTelemetry batch: 512 spans over 64 traces a request as OTLP protobuf, 8 clients,
 *      `--spans` spans or `--seconds`, whichever comes first;
 *    - with `--sustain N`: the 16-client shape for N seconds, the active parts of `spans` and
 *      `traces` read from system.parts every 15 s, with the service's resident memory then and
 *      what of it is the JS heap and the buffers outside it.
 *    The native shapes' traces start as they are sent, as real clients' do (the newest traces
 *    are the ones being written); with `--fixed-start-times`, at one past date whatever the
 *    time, as the benchmark sent them before 2026-11-26 (new traces then never lead the
 *    newest-first list).
 *    With `--cpu-profile <file>`, the service's thread is profiled over the first 15 s of the
 *    16-client shape and the profile written to the file (`.cpuprofile`, for DevTools or any
 *    reader of V8 profiles).
 *    Each shape's line also gives the service's own part: its POSTs' times from their headers
 *    read to their answer written (a client's latency less the wait before the service reads
 *    it, and the network), and its thread's garbage collections (scavenges, full collections).
 *    The server's peak RSS is read from /proc (VmHWM), each shape's (with its JS heap's largest
 *    size) and its whole life's.
 *
 * Each process runs this file in its role (ingest-child.ts): the store's fill and the raw
 * baseline in ingest-raw.ts, the service in ingest-server.ts, the reader in ingest-reader.ts;
 * the shapes' requests are in ingest-shapes.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fillTraceIds, makeBodyTemplate, makeTrace } from './ingest-data.js';
import { median, percentile, readPairs, sampleReads, serviceGet, workspaceTraces, type LoadResult } from './ingest-load.js';
import { child } from './ingest-child.js';
import { parseOptions, type Options } from './ingest-options.js';
import { rawRole } from './ingest-raw.js';
import { medians, readerRole, startReader } from './ingest-reader.js';
import { serverRole, startServerChild, type ThreadFigures } from './ingest-server.js';
import { nativeLoad, otelLoad, post } from './ingest-shapes.js';

const rate = (r: LoadResult) => r.spans / r.seconds;
const ms = (n: number) => `${n.toFixed(1)} ms`;

/** The service's own part of a shape: its POSTs from headers read to answer written, and its thread's collections. */
const serviceFigures = (f: ThreadFigures) =>
  `; in the service p50 ${ms(f.requests.p50)}, p99 ${ms(f.requests.p99)}; ${f.scavenges.count} scavenges, ${f.scavenges.ms.toFixed(0)} ms (p50 ${ms(f.scavenges.p50)}, max ${ms(f.scavenges.max)}), ${f.full.count} full collections (max ${ms(f.full.max)})`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

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
      const tracesBefore = await workspaceTraces(server.url, server.key);
      const c16 = await underLoad(16, options.seconds);
      settled.push(await server.settle());
      // The list reads every summary of the workspace (its count), which the shape grew: the
      // same reads once it ended tell growth from contention (not the goal's figure).
      const tracesAfter = await workspaceTraces(server.url, server.key);
      const idleAfter = await reader.sample(30);
      let c16Inline: Awaited<ReturnType<typeof underLoad>> | undefined;
      if (idleInline) {
        c16Inline = await underLoad(16, options.seconds, true);
        settled.push(await server.settle());
      }
      const c64 = await underLoad(64, options.seconds);
      settled.push(await server.settle());
      const otel = await otelLoad(server, options);
      const shape = (name: string, r: LoadResult) =>
        `${name.padEnd(44)} ${String(Math.round(rate(r))).padStart(7)} spans/s  p50 ${ms(percentile(r.latenciesMs, 50))}  p99 ${ms(percentile(r.latenciesMs, 99))}  (${r.spans} spans, ${r.seconds.toFixed(0)} s${r.applyingSeconds === undefined ? '' : `, the last applied ${r.applyingSeconds.toFixed(1)} s after its answer`}${r.flushes ? `; ${r.flushes.count} flushes of ${r.flushes.rows.toFixed(0)} spans, ${r.flushes.ms.toFixed(0)} ms each (span insert ${r.flushes.insertMs.toFixed(0)})` : ''}${r.loopDelay ? `; service event loop delay p50 ${ms(r.loopDelay.p50)}, p99 ${ms(r.loopDelay.p99)}` : ''}${r.logSyncs ? `; ${r.logSyncs.count} log syncs of ${ms(r.logSyncs.ms)}` : ''}${r.service ? serviceFigures(r.service) : ''}${r.peakRss ? `; peak RSS ${mib(r.peakRss)} (JS heap ${mib(r.peakHeap ?? 0)})` : ''})`;
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
        `GET /api/traces median:       idle ${ms(idle.list)}, under 16 clients ${ms(c16.list)} (${(c16.list / idle.list).toFixed(2)}x, goal <= 2x)`,
        `GET /api/traces/:id median:   idle ${ms(idle.detail)}, under 16 clients ${ms(c16.detail)} (${(c16.detail / idle.detail).toFixed(2)}x, goal <= 2x)`,
        `  (reads timed from a process of their own, a list then a trace ${options.readEvery > 0 ? `every ${options.readEvery} ms` : 'back to back'}, for the whole shape)`,
        ...(idlePaced
          ? [
              `  idle, paced as under load for 15 s (not the goal's figure): list ${ms(idlePaced.list)} (${(c16.list / idlePaced.list).toFixed(1)}x), trace ${ms(idlePaced.detail)} (${(c16.detail / idlePaced.detail).toFixed(1)}x)`,
            ]
          : []),
      );
      lines.push(
        `  idle after the shape, the workspace grown from ${tracesBefore} to ${tracesAfter} traces (not the goal's figure): list ${ms(idleAfter.list)} (${(c16.list / idleAfter.list).toFixed(1)}x), trace ${ms(idleAfter.detail)} (${(c16.detail / idleAfter.detail).toFixed(1)}x)`,
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
          const { parts, memory } = await server.parts();
          const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
          samples.push(
            `${Math.round((performance.now() - started) / 1000)}s spans=${parts.spans ?? 0} traces=${parts.traces ?? 0} ` +
              `rss=${mb(memory.rss)} heap=${mb(memory.heap)} external=${mb(memory.external)}`,
          );
          await new Promise((r) => setTimeout(r, 15_000));
        }
        lines.push(
          shape(`sustained ${options.sustain} s, 16 clients:`, await load),
          `active parts and the service's memory (MiB) over time: ${samples.join(', ')}`,
        );
      }
      reader.close();
      lines.push(`server peak RSS: ${mib(server.peakRss())} (goal < 1536 MiB)`);
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
