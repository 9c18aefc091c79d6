/**
 * Evaluators: `npm run bench -- evaluators [--jobs 2000] [--concurrency 128] [--seconds 20] [--phases 3] [--ack log|store]`.
 *
 * Embedded stores in a temp directory and a fake OpenAI-compatible server in this process that
 * answers at once (with token usage, so each judge call's trace is priced). The trace and score
 * writers are the service's (src/server.ts): over their write-ahead logs (`--ack log`, the
 * service's default), or answering once stored (`--ack store`).
 *
 * 1. Throughput: `--jobs` finished traces, a judge evaluator made after them and backfilled
 *    (one job per trace), then one worker of `--concurrency` lanes drains the queue: jobs per
 *    second, each job a judge call with its own trace and its score written.
 * 2. Ingest with an evaluator enabled against without, in the same run: `--phases` pairs of
 *    `--seconds` of ingest (batches of 20 traces of 10 spans, 4 at once), one phase with the
 *    worker stopped and its evaluators paused, one with a judge of every new trace running
 *    (delay 0, the worker polling every 2 s as the service does), alternated; traces per second of each,
 *    counted once applied: every phase starts with both writers' backlogs applied, its worker is
 *    stopped once its clients are done, and its time runs until what it wrote is applied.
 *    The workers are made as the service makes its own: over the app's ingest, rate limiter and
 *    measure of external ingest, which they yield to (src/evaluators/service/ingest-yield.ts). A
 *    third phase of each round runs a worker that hears no ingest (full speed, as before it
 *    yielded): the same run's comparison. Three pairs of 20 s by default: two pairs of 8 s (the
 *    default until 2026-11-28) read a paused evaluator's phase at 74% to 112% of the phase
 *    without on the same code, too wide to tell a goal of 90% (docs/benchmarks.md).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchWorkspaceKey } from './bench-service.js';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const n = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
  return n;
}

function ackOption(args: string[]): 'log' | 'store' {
  const i = args.indexOf('--ack');
  const ack = i >= 0 ? args[i + 1] : 'log';
  if (ack !== 'log' && ack !== 'store') throw new Error('--ack must be log or store');
  return ack;
}

/** A judge that answers at once: a fixed structured answer and its usage. */
async function startFakeJudge() {
  const body = JSON.stringify({
    id: 'c',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ value: 1, reasoning: 'fine' }) } }],
    usage: { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 },
  });
  let calls = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function traceOf(id: string, now: number, spans = 1) {
  const start = new Date(now - 1000).toISOString();
  const end = new Date(now - 900).toISOString();
  return {
    traceId: id,
    source: 'sdk',
    name: 'chat',
    spans: Array.from({ length: spans }, (_, s) => ({
      spanId: `s${s}`,
      ...(s > 0 && { parentSpanId: 's0' }),
      name: s === 0 ? 'chat' : `step ${s}`,
      kind: s === 0 ? 'agent' : 'llm.chat',
      model: 'gpt-4o-mini',
      startTime: start,
      endTime: end,
      durationMs: 100,
      status: 'ok',
      inputTokens: 100,
      outputTokens: 50,
      input: { text: `question ${id} ${s}` },
      output: { text: `answer ${id} ${s}` },
    })),
  };
}

export async function run(args: string[]): Promise<void> {
  const jobCount = option(args, 'jobs', 2000);
  const concurrency = option(args, 'concurrency', 128);
  const seconds = option(args, 'seconds', 20);
  const phases = option(args, 'phases', 3);
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-evaluators-'));
  process.env.LOUPE_ENCRYPTION_KEY = 'ef'.repeat(32);
  process.env.LOUPE_WEBHOOK_ALLOW_PRIVATE = 'true';
  const { loadConfig } = await import('../src/config.js');
  const { createLogger, openStores, migrate } = await import('../src/server.js');
  const ack = ackOption(args);
  const config = loadConfig({ ...process.env, LOUPE_DATA_DIR: dir, LOG_LEVEL: 'warn', LOUPE_INGEST_ACK: ack });
  const logger = createLogger(config);
  const stores = await openStores(config, logger);
  await migrate(config, stores);
  console.log('stores open');
  const fake = await startFakeJudge();
  try {
    const { buildApp, evaluatorWorkerFor } = await import('../src/app.js');
    const { openWriter, openScoreWriter } = await import('../src/server.js');
    const sql = stores.postgres.sql;
    // The trace writer and the one score writer, as the service opens them (src/server.ts): over their
    // write-ahead logs (LOUPE_INGEST_ACK=log, the default), or with `--ack store` answering once stored.
    const writer = openWriter(config, stores.clickhouse.writeClient, logger);
    const scoreWriter = openScoreWriter(config, stores.clickhouse.writeClient, logger);
    const app = await buildApp({ config, sql, clickhouse: stores.clickhouse.client, writer, scoreWriter, consoleDir: false });
    const headers = { 'x-api-key': await benchWorkspaceKey(sql, 'bench-evaluators') };
    const call = async (method: 'POST' | 'GET', url: string, payload?: object) => {
      const res = await app.inject({ method, url, headers, ...(payload && { payload }) });
      if (res.statusCode >= 300) throw new Error(`${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
      return res.json().data;
    };
    const connection = await call('POST', '/api/model-connections', {
      name: 'judge',
      provider: 'openai',
      baseUrl: fake.url,
      apiKey: 'sk-bench',
      defaultModel: 'gpt-4o-mini',
    });
    await call('POST', '/api/prompt', { name: 'judge', systemPrompt: 'You grade answers.', humanPrompt: 'Q: {q}\nA: {a}' });
    const judge = (name: string) =>
      call('POST', '/api/evaluators', {
        name,
        type: 'llm_judge',
        judge: { connectionId: connection.id, prompt: { name: 'judge' }, variables: { q: 'input', a: 'output' } },
        score: { name: 'quality', dataType: 'numeric' },
        target: { delaySeconds: 0 },
      }) as Promise<{ id: string }>;

    // 1. Throughput.
    const from = new Date(Date.now() - 60_000).toISOString();
    const now = Date.now();
    for (let start = 0; start < jobCount; start += 500) {
      const traces = Array.from({ length: Math.min(500, jobCount - start) }, (_, k) => traceOf(`past-${start + k}`, now));
      await call('POST', '/api/traces', { traces });
    }
    console.log(`${jobCount} traces stored`);
    const drained = await judge('throughput');
    for (let queued = 0; queued < jobCount;) {
      const r = await call('POST', `/api/evaluators/${drained.id}/backfill`, { from, maxJobs: 10_000 });
      queued += r.queued;
      if (!r.truncated) break;
    }
    console.log('jobs queued');
    const worker = evaluatorWorkerFor(
      { config, sql, clickhouse: stores.clickhouse.client, writer, scoreWriter, ingest: app.traceIngest, shared: app.evaluation },
      { concurrency, perWorkspaceConcurrency: concurrency },
    );
    const cpu = process.cpuUsage();
    const started = performance.now();
    const ran = await worker.runOnce();
    const seconds1 = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const [counted] = await sql<{ succeeded: number }[]>`
      select count(*)::int as succeeded from evaluator_jobs where evaluator_id = ${drained.id} and status = 'succeeded'`;
    const succeeded = counted?.succeeded ?? 0;
    if (succeeded !== jobCount) throw new Error(`${succeeded} of ${jobCount} jobs succeeded`);
    console.log(
      `throughput: ${ran} jobs in ${seconds1.toFixed(1)} s = ${(ran / seconds1).toFixed(0)} jobs/s ` +
        `(${concurrency} lanes; ${((used.user + used.system) / 1000 / ran).toFixed(2)} ms CPU a job in this process, which also runs the fake judge)`,
    );
    await call('POST', `/api/evaluators/${drained.id}/pause`);

    // 2. Ingest with and without an evaluator.
    const live = await judge('live');
    await call('POST', `/api/evaluators/${live.id}/pause`);
    const liveWorker = evaluatorWorkerFor(
      { config, sql, clickhouse: stores.clickhouse.client, writer, scoreWriter, ingest: app.traceIngest, shared: app.evaluation },
      { concurrency, perWorkspaceConcurrency: concurrency },
    );
    let batch = 0;
    // Both writers answer once logged and apply later: a phase that began with the backlog of the
    // one before (a full ingest backlog, or a full-speed worker's judge traces and scores) paid for
    // it, and one that left its own behind did not. Each phase starts from a store with everything
    // applied, and its rate counts its traces once applied (what its worker left in the writers
    // included), not once answered.
    const applied = () => Promise.all([writer.settled(), scoreWriter.settled()]);
    const ingestFor = async (ms: number, worker?: { start(): void; stop(): Promise<void> }) => {
      await applied();
      worker?.start();
      const until = performance.now() + ms;
      let traces = 0;
      const lane = async () => {
        while (performance.now() < until) {
          const at = Date.now();
          const body = Array.from({ length: 20 }, (_, k) => traceOf(`live-${batch}-${k}`, at, 10));
          batch += 1;
          await call('POST', '/api/traces', { traces: body });
          traces += 20;
        }
      };
      const t0 = performance.now();
      await Promise.all(Array.from({ length: 4 }, lane));
      // Stopped once its clients are done, so it never runs at full speed beside the writers' last flushes.
      await worker?.stop();
      await applied();
      return traces / ((performance.now() - t0) / 1000);
    };
    // The worker as it was before it yielded, for the same run's comparison: it hears no ingest.
    const fullSpeedWorker = evaluatorWorkerFor(
      { config, sql, clickhouse: stores.clickhouse.client, writer, scoreWriter, ingest: app.traceIngest },
      { concurrency, perWorkspaceConcurrency: concurrency },
    );
    const rates = { without: [] as number[], with: [] as number[], fullSpeed: [] as number[] };
    const judged = { with: 0, fullSpeed: 0 };
    const withWorker = async (worker: typeof liveWorker) => {
      await call('POST', `/api/evaluators/${live.id}/resume`);
      const before = fake.calls();
      const rate = await ingestFor(seconds * 1000, worker);
      await call('POST', `/api/evaluators/${live.id}/pause`);
      return { rate, judged: fake.calls() - before };
    };
    for (let p = 0; p < phases; p += 1) {
      rates.without.push(await ingestFor(seconds * 1000));
      const yielding = await withWorker(liveWorker);
      rates.with.push(yielding.rate);
      judged.with += yielding.judged;
      const fullSpeed = await withWorker(fullSpeedWorker);
      rates.fullSpeed.push(fullSpeed.rate);
      judged.fullSpeed += fullSpeed.judged;
      console.log(
        `phase ${p + 1}: ingest ${rates.without.at(-1)!.toFixed(0)} traces/s without an evaluator, ${rates.with.at(-1)!.toFixed(0)} traces/s ` +
          `with one yielding (${yielding.judged} judged), ${rates.fullSpeed.at(-1)!.toFixed(0)} traces/s with one at full speed (${fullSpeed.judged} judged)`,
      );
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const share = (xs: number[]) => ((mean(xs) / mean(rates.without)) * 100).toFixed(0);
    console.log(
      `ingest with an evaluator: ${mean(rates.with).toFixed(0)} traces/s = ${share(rates.with)}% ` +
        `of ${mean(rates.without).toFixed(0)} traces/s without (same run), ${judged.with} traces judged meanwhile; ` +
        `with one not yielding: ${mean(rates.fullSpeed).toFixed(0)} traces/s = ${share(rates.fullSpeed)}%, ${judged.fullSpeed} judged`,
    );
    await app.close();
    await writer.close();
    await scoreWriter.close();
  } finally {
    await fake.close();
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
