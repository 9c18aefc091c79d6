/**
 * Scores benchmark: `npm run bench -- scores [--spans 1000000] [--scores 1000000] [--calls 20]
 * [--batch 5000] [--ingest-requests 200] [--ingest-only]`.
 * `--ingest-only` skips the reads (with smaller `--spans` and `--scores`, a quick look at ingest).
 *
 * One process, one temporary LOUPE_DATA_DIR: the service (buildApp on the embedded stores, its
 * own writer, listening on 127.0.0.1) and the load. It loads the query benchmark's traces
 * (bench/query-data.ts; every trace's first LLM call uses the prompt `support-answer`, versions
 * 1.0.0 and 1.1.0 alternating) through `storeTraces`, and ten scores per trace through the
 * scores feature's `ingestScores` (the ingest path minus HTTP): on the trace (numeric, boolean,
 * categorical), on each LLM call, on the prompt's span and on two tool calls. Then, through
 * HTTP, once the merges have settled, the median of `--calls` calls after one warm-up:
 * - the floor: GET /api/me (no ClickHouse);
 * - a trace list filtered by a score (goal ≤ 100 ms), a trace holding 100 scores (≤ 30 ms),
 *   the prompt comparison over the 100,000 scored prompt spans (≤ 300 ms);
 * - the reads that average scores per session and user, and filter scores by them;
 * and last score ingest against trace ingest of the same bytes: rounds alternating
 * `--ingest-requests` POST /api/scores of 1,000 scores with as many POST /api/traces of the
 * same body size, each round timed until its writes are applied (goal: scores' bytes per second
 * ≥ 100% of traces').
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Trace } from '../src/traces/model/schemas.js';
import type { ClickHouseClient } from '../src/stores/clickhouse.js';
import type { Sql } from '../src/stores/postgres.js';
import { benchWorkspaceKey, openBenchStores } from './bench-service.js';
import { median, sampleReads, serviceGet } from './ingest-load.js';
import { settleMerges } from './ingest-server.js';
import { makeQueryTrace, spansPerTrace } from './query-data.js';

const dayMs = 24 * 3600_000;
const promptName = 'support-answer';
const versions = ['1.0.0', '1.1.0'] as const;
const tones = ['polite', 'neutral', 'curt'] as const;

function parseOptions(args: string[]) {
  const arg = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const options = {
    spans: Number(arg('spans') ?? 1_000_000),
    scores: Number(arg('scores') ?? 1_000_000),
    calls: Number(arg('calls') ?? 20),
    batch: Number(arg('batch') ?? 5000),
    // 200 (50 a round): with 10 a round (the default before 2026-11-28), each round's last flush,
    // paid whatever the round's size, weighed as much as the rate (docs/benchmarks.md, "Score
    // inserts made cheaper for the engine").
    ingestRequests: Number(arg('ingest-requests') ?? 200),
  };
  /** A data directory kept after the run: loaded when it holds no load yet, else read as it is. */
  const dir = arg('dir');
  /** Only the reads whose name holds this text, and no ingest (to look at one read again). */
  const only = arg('only');
  /** Only the ingest comparison, no reads. */
  const ingestOnly = args.includes('--ingest-only');
  if (!Number.isInteger(options.spans) || options.spans < spansPerTrace || !Object.values(options).every((n) => n > 0)) {
    throw new Error('--spans, --scores, --calls, --batch and --ingest-requests take positive whole numbers');
  }
  return { ...options, dir, only, ingestOnly };
}

/** The query benchmark's trace n, its first LLM call made with a version of the prompt. */
function withPrompt(trace: Trace, traceNumber: number): Trace {
  const version = versions[traceNumber % 2]!;
  return {
    ...trace,
    spans: trace.spans.map((span) => (span.spanId === 'llm-0' ? { ...span, promptName, promptVersion: version } : span)),
  };
}

/** Deterministic values in [0, 1) from two numbers. */
const unit = (a: number, b: number) => (((Math.imul(a + 1, 2654435761) ^ Math.imul(b + 7, 40503)) >>> 0) % 10_000) / 10_000;

/** The ten scores of trace n: a version's prompt span scores a little higher on 1.1.0. */
function scoresOf(traceId: string, traceNumber: number): Record<string, unknown>[] {
  const u = (k: number) => unit(traceNumber, k);
  const lift = traceNumber % 2 === 1 ? 0.03 : 0;
  return [
    { name: 'helpfulness', value: u(1), traceId },
    { name: 'correct', value: u(2) < 0.8, traceId },
    { name: 'tone', value: tones[Math.floor(u(3) * tones.length)], traceId },
    ...[0, 1, 2, 3].map((i) => ({ name: 'relevance', value: u(10 + i), traceId, spanId: `llm-${i}` })),
    { name: 'groundedness', value: Math.min(1, u(20) + lift), traceId, spanId: 'llm-0' },
    ...[0, 1].map((i) => ({ name: 'tool-ok', value: u(30 + i) < 0.95, traceId, spanId: `tool-${i}` })),
  ];
}
const scoresPerTrace = 10;

async function call(url: string, key: string, init: { method: string; body?: string }) {
  const res = await fetch(url, { ...init, headers: { 'x-api-key': key, 'content-type': 'application/json' } });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${init.method} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as { data: any };
}

/** What a load left: the workspace's key, the range its traces were spread over, the prompt versions. */
interface Load {
  key: string;
  workspaceId: string;
  rangeStart: number;
  rangeEnd: number;
  traces: number;
  scored: number;
  baselineId: number;
  subjectId: number;
  spansSeconds: number;
  scoresSeconds: number;
}

/** Trace n of a load, as loaded. */
const traceMaker = (load: Pick<Load, 'rangeStart' | 'rangeEnd'>) => (n: number) =>
  withPrompt(makeQueryTrace(n, load.rangeStart, load.rangeEnd - load.rangeStart), n);

/**
 * Loads a new bench workspace: traces in-process (storeTraces), their scores through the scores
 * feature's ingest, the prompt's two versions, and 100 scores (ten on each span) on one trace.
 */
async function loadData(
  base: string,
  { clickhouse, sql }: { clickhouse: ClickHouseClient; sql: Sql },
  options: ReturnType<typeof parseOptions>,
): Promise<Load> {
  const { storeTraces, traceIngestOf } = await import('../src/traces/ingest/ingest.js');
  const { WriteBatcher } = await import('../src/traces/writer/write-batcher.js');
  const { ingestScores } = await import('../src/scores/service/ingest.js');
  const { VersionClock } = await import('../src/scores/model/version-clock.js');
  const { newScoreWriter } = await import('../src/app.js');
  const key = await benchWorkspaceKey(sql, 'bench-scores');
  const workspaceId: string = (await call(`${base}/api/me`, key, { method: 'GET' })).data.workspaceId;
  const rangeEnd = Date.now() - 3600_000;
  const rangeStart = rangeEnd - 30 * dayMs + 2 * 3600_000;
  const trace = traceMaker({ rangeStart, rangeEnd });

  const traces = options.spans / spansPerTrace;
  const loadStarted = performance.now();
  const batcher = new WriteBatcher(clickhouse);
  for (let loaded = 0; loaded < traces;) {
    const count = Math.min(options.batch, traces - loaded);
    await storeTraces(
      traceIngestOf(batcher),
      workspaceId,
      Array.from({ length: count }, (_, i) => trace(loaded + i)),
    );
    loaded += count;
    if (loaded % (options.batch * 20) === 0) console.error(`loaded ${loaded * spansPerTrace} spans`);
  }
  const spansSeconds = (performance.now() - loadStarted) / 1000;
  // Loaded through a score writer of its own answering once stored: the load is stored when it ends.
  const scoreStores = { clickhouse, sql, clock: new VersionClock(), writes: newScoreWriter(clickhouse) };
  const scored = Math.min(traces, Math.ceil(options.scores / scoresPerTrace));
  const scoresStarted = performance.now();
  const tracesPerBatch = Math.max(1, Math.floor(options.batch / scoresPerTrace));
  for (let n = 0; n < scored; n += tracesPerBatch) {
    const items = [];
    for (let m = n; m < Math.min(scored, n + tracesPerBatch); m++) items.push(...scoresOf(trace(m).traceId, m));
    const result = await ingestScores(scoreStores, { workspaceId, authorId: 'bench', defaultSource: 'api' }, items);
    if (result.rejected > 0) throw new Error(`seeding scores: ${JSON.stringify(result.errors.slice(0, 3))}`);
    if ((n / tracesPerBatch) % 20 === 0) console.error(`loaded ${n * scoresPerTrace} scores`);
  }
  const scoresSeconds = (performance.now() - scoresStarted) / 1000;
  console.error(
    `loaded ${options.spans} spans in ${spansSeconds.toFixed(0)} s, ${scored * scoresPerTrace} scores in ${scoresSeconds.toFixed(0)} s`,
  );

  const created = await call(`${base}/api/prompt`, key, { method: 'POST', body: JSON.stringify({ name: promptName, systemPrompt: 'a' }) });
  const next = await call(`${base}/api/prompt/${created.data.id}/versions`, key, {
    method: 'POST',
    body: JSON.stringify({ newVersion: versions[1], changes: { systemPrompt: 'b', isLatest: true } }),
  });
  const sample = trace(Math.floor(traces / 2) + 1);
  const hundred = sample.spans.flatMap((span, s) =>
    Array.from({ length: 100 / sample.spans.length }, (_, k) => ({
      name: `check-${k}`,
      value: unit(s, k),
      traceId: sample.traceId,
      spanId: span.spanId,
    })),
  );
  await call(`${base}/api/scores`, key, { method: 'POST', body: JSON.stringify({ scores: hundred }) });
  return {
    key,
    workspaceId,
    rangeStart,
    rangeEnd,
    traces,
    scored,
    baselineId: created.data.id,
    subjectId: next.data.id,
    spansSeconds,
    scoresSeconds,
  };
}

export async function run(args: string[]) {
  const options = parseOptions(args);
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'loupe-bench-scores-'));
  const { buildApp } = await import('../src/app.js');
  const server = await import('../src/server.js');
  const { createRateLimiter } = await import('../src/tenancy/service/rate-limit.js');
  const { config, log, stores } = await openBenchStores(dir);
  const sql = stores.postgres.sql;
  const clickhouse = stores.clickhouse.client;
  const writer = server.openWriter(config, stores.clickhouse.writeClient, log);
  const scoreWriter = server.openScoreWriter(config, stores.clickhouse.writeClient, log);
  const app = await buildApp({ config, sql, clickhouse, writer, scoreWriter, log, admit: createRateLimiter(sql).admit });
  try {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const statePath = path.join(dir, 'bench-scores.json');
    const load: Load = existsSync(statePath)
      ? (JSON.parse(readFileSync(statePath, 'utf8')) as Load)
      : await loadData(base, { clickhouse, sql }, options);
    writeFileSync(statePath, JSON.stringify(load));
    const { key, traces, scored } = load;
    const trace = traceMaker(load);
    const sample = trace(Math.floor(traces / 2) + 1);
    console.error(`merges settled after ${(await settleMerges(clickhouse)).toFixed(0)} s`);

    const session = encodeURIComponent(sample.sessionId!);
    const user = encodeURIComponent(sample.userId!);
    const reads: Array<[string, string, number | null]> = [
      ['GET /api/me (no ClickHouse: the floor)', '/api/me', null],
      ['GET /api/traces?score=helpfulness&scoreMin=0.95', '/api/traces?score=helpfulness&scoreMin=0.95', 100],
      ['GET /api/traces?score=tone&scoreValue=curt', '/api/traces?score=tone&scoreValue=curt', 100],
      ['GET /api/traces/:id (100 scores)', `/api/traces/${sample.traceId}`, 30],
      [
        'GET /api/prompt/:id/compare?against= (100,000 scored spans)',
        `/api/prompt/${load.subjectId}/compare?against=${load.baselineId}`,
        300,
      ],
      ['GET /api/traces (list items with averages)', '/api/traces', null],
      ['GET /api/sessions (averages per session)', '/api/sessions', null],
      ['GET /api/sessions/:id', `/api/sessions/${session}`, null],
      ['GET /api/users (averages per user)', '/api/users', null],
      ['GET /api/users/:id', `/api/users/${user}`, null],
      ['GET /api/scores?sessionId=…', `/api/scores?sessionId=${session}`, null],
      ['GET /api/scores?userId=…', `/api/scores?userId=${user}`, null],
      ['GET /api/traces/stats?groupBy=score', '/api/traces/stats?groupBy=score', null],
      ['GET /api/traces/stats?groupBy=model (with averages)', '/api/traces/stats?groupBy=model', null],
      ['GET /api/scores/analytics', '/api/scores/analytics', null],
    ];
    const get = serviceGet(base, key);
    const figures: Array<[string, string, string]> = [];
    const wanted = ([name]: [string, string, number | null]) =>
      !options.ingestOnly && (options.only === undefined || name.includes(options.only));
    for (const [name, url, goal] of reads.filter(wanted)) {
      const read = get(url);
      let ms: number;
      try {
        await read();
        ms = median(await sampleReads(read, { count: options.calls }));
      } catch (error) {
        // A read the service refuses (e.g. 422, over the stats' limits) is reported as such, the others still run.
        console.error(`${name}: ${(error as Error).message}`);
        figures.push([name, (error as Error).message, goal === null ? '' : `≤ ${goal} ms (miss)`]);
        continue;
      }
      console.error(`${name}: ${ms.toFixed(1)} ms`);
      figures.push([name, `${ms.toFixed(1)} ms`, goal === null ? '' : `≤ ${goal} ms${ms > goal ? ' (miss)' : ''}`]);
    }

    if (options.only !== undefined) return;
    // Ingest: score requests of 1,000 and trace requests of the same body size, in alternating rounds.
    // Scores of traces not stored yet (as a score may come first), traces after them: no id is sent twice.
    const scoreBodies: string[] = [];
    const traceBodies: string[] = [];
    let nextTrace = traces + options.ingestRequests * (1000 / scoresPerTrace);
    for (let r = 0; r < options.ingestRequests; r++) {
      const first = traces + r * (1000 / scoresPerTrace);
      const items = Array.from({ length: 1000 / scoresPerTrace }, (_, k) => scoresOf(trace(first + k).traceId, first + k)).flat();
      const body = JSON.stringify({ scores: items });
      scoreBodies.push(body);
      const batch: Trace[] = [];
      for (let bytes = 0; bytes < body.length;) {
        const t = trace(nextTrace++);
        batch.push(t);
        bytes += JSON.stringify(t).length + 1;
      }
      traceBodies.push(JSON.stringify({ traces: batch }));
    }
    const rounds = 4;
    const perRound = Math.ceil(options.ingestRequests / rounds);
    const seconds = { scores: 0, traces: 0 };
    const bytes = { scores: 0, traces: 0 };
    // Both writers answer once logged and apply later. Each round of a kind starts with both
    // backlogs applied (it pays for none of the other's) and its time runs until what it wrote is
    // applied: a rate of bytes stored, not of bytes logged, which a short burst into the log's
    // backlog would flatter.
    const applied = { scores: () => scoreWriter.settled(), traces: () => writer.settled() };
    for (let round = 0; round < rounds; round++) {
      for (const kind of ['scores', 'traces'] as const) {
        const bodies = (kind === 'scores' ? scoreBodies : traceBodies).slice(round * perRound, (round + 1) * perRound);
        await Promise.all([applied.scores(), applied.traces()]);
        const started = performance.now();
        for (const body of bodies) {
          const answer = await call(`${base}/api/${kind}`, key, { method: 'POST', body });
          if (kind === 'scores' && answer.data.rejected > 0) throw new Error(`scores rejected: ${JSON.stringify(answer.data.errors[0])}`);
          bytes[kind] += body.length;
        }
        await applied[kind]();
        seconds[kind] += (performance.now() - started) / 1000;
      }
    }
    const rate = { scores: bytes.scores / seconds.scores, traces: bytes.traces / seconds.traces };
    const ratio = rate.scores / rate.traces;

    console.log(
      `\n| call | ${options.spans.toLocaleString('en')} spans, ${(scored * scoresPerTrace).toLocaleString('en')} scores | goal |\n|---|---|---|`,
    );
    for (const [name, figure, goal] of figures) console.log(`| ${name} | ${figure} | ${goal} |`);
    const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB/s`;
    console.log(
      `| POST /api/scores (1,000 a request) vs POST /api/traces, same bytes | ${mb(rate.scores)} vs ${mb(rate.traces)} (${(ratio * 100).toFixed(0)}%; ` +
        `${((options.ingestRequests * 1000) / seconds.scores).toFixed(0)} scores/s) | ≥ 100%${ratio < 1 ? ' (miss)' : ''} |`,
    );
    console.log(
      `\nMedian of ${options.calls} calls after one warm-up, through HTTP on the embedded engine, once merges settled. ` +
        `Loading took ${load.spansSeconds.toFixed(0)} s for the spans (storeTraces) and ${load.scoresSeconds.toFixed(0)} s for the scores (ingestScores), in-process. ` +
        `Ingest: ${options.ingestRequests} requests of each kind, one at a time, in ${rounds} alternating rounds, each timed until applied (${(bytes.scores / 1e6).toFixed(1)} MB each).`,
    );
  } finally {
    await app.close();
    await writer.close();
    await scoreWriter.close();
    await stores.close();
    if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
