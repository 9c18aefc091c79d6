/**
 * OTLP bridge benchmark: `npm run bench -- otlp [--spans N] [--clients 4] [--rounds 8]`.
 *
 * A child process runs the service (embedded stores in a temp LOUPE_DATA_DIR, the service's
 * write path: acknowledged once in the write-ahead log). The same spans (512 per request: 64
 * traces of 8 GenAI spans) go in three times, under different trace ids: as native JSON to
 * POST /api/traces, as OTLP protobuf exports to POST /api/traces/otlp/v1/traces, and as
 * OTLP/gRPC exports (TraceService/Export), each from N concurrent clients (for gRPC, N
 * channels, as N exporters hold), in alternating rounds.
 * Bodies are built before the clock starts, so the rates measure the server.
 * With `--cpu`, no service: the CPU time of each stage per export, in this process (otlp-cpu.ts).
 * With `--mapping`, no service: the mapping's CPU per span against a baseline tree (otlp-mapping.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { credentials, makeGenericClientConstructor, Metadata, type Client } from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeProtobufRequest, decodeProtobufResponse, encodeProtobufRequest } from '../src/traces/ingest/otlp/wire/protobuf.js';
import { normalizeExport } from '../src/traces/ingest/otlp/mapping/normalize.js';
import { exportRequest, spansPerRequest, spansPerTrace, tracesPerRequest } from './otlp-data.js';
import { runCpu } from './otlp-cpu.js';
import { runMapping } from './otlp-mapping.js';
import { serviceNodeFlags } from '../src/node-flags.js';
import { traceExportPath } from '../src/traces/api/grpc/server.js';
import { benchWorkspaceKey, openBenchStores } from './bench-service.js';

const self = fileURLToPath(import.meta.url);

/**
 * The service in a child process: the stores, the app with its rate limiter, and a workspace
 * key of an enterprise organization whose limits are far above what the run sends.
 */
async function serverRole() {
  const { buildApp, credentialCacheFor } = await import('../src/app.js');
  const { openWriter } = await import('../src/server.js');
  const { createGrpcAdmission } = await import('../src/grpc-access.js');
  const { startOtlpGrpcServer } = await import('../src/traces/api/grpc/server.js');
  const { createRateLimiter } = await import('../src/tenancy/service/rate-limit.js');
  const { config, log, stores } = await openBenchStores(process.env.BENCH_DIR);
  const sql = stores.postgres.sql;
  // As startServer wires them: one writer, key cache and rate limiter for both listeners.
  const writer = openWriter(config, stores.clickhouse.writeClient, log);
  const keys = credentialCacheFor(sql, config, log);
  const limiter = createRateLimiter(sql);
  const app = await buildApp({ config, sql, clickhouse: stores.clickhouse.client, writer, keys, log, admit: limiter.admit });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const grpc = await startOtlpGrpcServer({
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: config.LOUPE_BODY_LIMIT,
    ingest: app.traceIngest,
    admit: createGrpcAdmission({ sql, keys, limiter }),
    log,
  });
  const key = await benchWorkspaceKey(sql, 'bench-otlp');
  process.send!({ url, grpcPort: grpc.port, key });
  process.once('message', () => {
    void Promise.all([app.close(), grpc.stop()])
      .then(() => writer.close())
      .then(() => stores.close())
      .then(() => process.exit(0));
  });
}

/** Sends every body from `clients` concurrent senders; `send` throws on a failed answer. */
async function drive(bodies: Buffer[], clients: number, send: (body: Buffer) => Promise<void>) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < bodies.length) await send(bodies[next++]!);
    }),
  );
  return (performance.now() - started) / 1000;
}

export async function run(args: string[]) {
  // The bridge's CPU per export, stage by stage, in this process (otlp-cpu.ts).
  if (args.includes('--cpu')) return runCpu(args);
  // The mapping's CPU per span, this tree against a baseline tree (otlp-mapping.ts).
  if (args.includes('--mapping')) return runMapping(args);
  const option = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    const n = i >= 0 ? Number(args[i + 1]) : fallback;
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
    return n;
  };
  const spans = option('spans', 102_400);
  const clients = option('clients', 4);
  const rounds = option('rounds', 8);
  const requests = Math.ceil(spans / spansPerRequest);

  const protobufBodies = Array.from({ length: requests }, (_, r) => encodeProtobufRequest(exportRequest(1, r)));
  const grpcBodies = Array.from({ length: requests }, (_, r) => encodeProtobufRequest(exportRequest(2, r)));
  // The native bodies hold exactly the spans the bridge makes of the same export.
  const nativeBodies = Array.from({ length: requests }, (_, r) =>
    Buffer.from(JSON.stringify({ traces: normalizeExport(decodeProtobufRequest(encodeProtobufRequest(exportRequest(0, r)))).traces })),
  );

  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-otlp-'));
  const proc: ChildProcess = fork(self, ['--role', 'server'], {
    env: { ...process.env, BENCH_DIR: dir },
    execArgv: [...serviceNodeFlags, '--import', 'tsx'],
    stdio: 'inherit',
  });
  try {
    const { url, grpcPort, key } = await new Promise<{ url: string; grpcPort: number; key: string }>((resolve, reject) => {
      proc.once('message', (m: any) => resolve(m));
      proc.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    const sendNative = async (body: Buffer) => {
      const res = await fetch(`${url}/api/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: new Uint8Array(body),
      });
      const result = (await res.json()) as { data?: { accepted: number } };
      if (res.status !== 200 || result.data?.accepted !== tracesPerRequest)
        throw new Error(`native ingest failed: ${res.status} ${JSON.stringify(result).slice(0, 300)}`);
    };
    const sendOtlp = async (body: Buffer) => {
      const res = await fetch(`${url}/api/traces/otlp/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', 'x-api-key': key },
        body: new Uint8Array(body),
      });
      const answer = decodeProtobufResponse(new Uint8Array(await res.arrayBuffer()));
      if (res.status !== 200 || answer.partialSuccess?.rejectedSpans)
        throw new Error(`OTLP export failed: ${res.status} ${JSON.stringify(answer).slice(0, 300)}`);
    };
    // One channel per client, as each exporter holds its own (a local subchannel pool: no sharing).
    const GrpcClient = makeGenericClientConstructor({}, 'TraceService');
    const channels: Client[] = Array.from(
      { length: clients },
      () => new GrpcClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }),
    );
    const metadata = new Metadata();
    metadata.set('x-api-key', key);
    let nextChannel = 0;
    const sendGrpc = (body: Buffer) =>
      new Promise<void>((resolve, reject) => {
        const channel = channels[nextChannel++ % clients]!;
        channel.makeUnaryRequest(
          traceExportPath,
          (m: Buffer) => m,
          (m: Buffer) => m,
          body,
          metadata,
          (error, answer) => {
            if (error) return reject(new Error(`OTLP/gRPC export failed: ${error.code} ${error.details}`));
            const decoded = decodeProtobufResponse(answer!);
            if (decoded.partialSuccess?.rejectedSpans)
              return reject(new Error(`OTLP/gRPC export rejected spans: ${JSON.stringify(decoded)}`));
            resolve();
          },
        );
      });
    // Rounds alternate the three paths, so background merges and a warming engine weigh on all alike.
    let nativeSeconds = 0;
    let otlpSeconds = 0;
    let grpcSeconds = 0;
    const perRound = Math.ceil(requests / rounds);
    for (let r = 0; r < rounds; r++) {
      const slice = [r * perRound, Math.min(requests, (r + 1) * perRound)] as const;
      nativeSeconds += await drive(nativeBodies.slice(...slice), clients, sendNative);
      otlpSeconds += await drive(protobufBodies.slice(...slice), clients, sendOtlp);
      grpcSeconds += await drive(grpcBodies.slice(...slice), clients, sendGrpc);
    }
    for (const channel of channels) channel.close();
    const total = requests * spansPerRequest;
    const nativeRate = total / nativeSeconds;
    const otlpRate = total / otlpSeconds;
    const grpcRate = total / grpcSeconds;
    console.log(
      [
        `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}`,
        `requests: ${requests} of ${spansPerRequest} spans (${tracesPerRequest} traces x ${spansPerTrace} GenAI spans), ${clients} concurrent clients`,
        `native JSON  POST /api/traces:                ${total} spans in ${nativeSeconds.toFixed(1)} s = ${Math.round(nativeRate)} spans/s`,
        `OTLP protobuf POST /api/traces/otlp/v1/traces: ${total} spans in ${otlpSeconds.toFixed(1)} s = ${Math.round(otlpRate)} spans/s`,
        `OTLP/gRPC TraceService/Export:                 ${total} spans in ${grpcSeconds.toFixed(1)} s = ${Math.round(grpcRate)} spans/s`,
        `ratio OTLP / native: ${((100 * otlpRate) / nativeRate).toFixed(0)}% (goal >= 80%)`,
        `ratio OTLP/gRPC / OTLP/HTTP protobuf: ${((100 * grpcRate) / otlpRate).toFixed(0)}% (goal >= 100%)`,
      ].join('\n'),
    );
  } finally {
    proc.send('stop');
    await new Promise((resolve) => proc.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--role')) {
  serverRole().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
