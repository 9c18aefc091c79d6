/**
 * Monitor evaluation: `npm run bench -- monitors [--monitors 100] [--traces 20000] [--rounds 5]`.
 *
 * Embedded stores in a temp directory, one workspace with `--traces` traces spread over the last
 * two hours, `--monitors` monitors over every metric, filter and condition kind (one-hour
 * windows). Runs `--rounds` evaluation rounds, as the service does every
 * LOUPE_MONITOR_INTERVAL_MS, and prints each round's wall time and this process's CPU time, and
 * the CPU share of one core a round a minute costs. Same-run baseline: a round of the same
 * monitors' PostgreSQL work alone (a `select 1` per monitor in place of the metric query).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openBenchStores, benchWorkspaceKey } from './bench-service.js';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const n = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
  return n;
}

const metrics = ['cost', 'error_rate', 'latency_p95', 'trace_count', 'unpriced_spans', 'score_mean'] as const;
const filterSets = [{}, { environment: 'production' }, { model: 'gpt-4o' }, { tag: 'beta' }, { userId: 'u3' }, { name: 'chat' }];

export async function run(args: string[]): Promise<void> {
  const monitorCount = option(args, 'monitors', 100);
  const traceCount = option(args, 'traces', 20_000);
  const rounds = option(args, 'rounds', 5);
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-monitors-'));
  const { config, stores } = await openBenchStores(dir);
  try {
    const { buildApp } = await import('../src/app.js');
    const { monitorMetricReader } = await import('../src/traces/tables/monitor-metrics-table.js');
    const { enqueueEvent } = await import('../src/prompts/tables/webhook-outbox-table.js');
    const { createMonitorEvaluator } = await import('../src/monitors/service/evaluator.js');
    const sql = stores.postgres.sql;
    const app = await buildApp({ config, sql, clickhouse: stores.clickhouse.client, consoleDir: false });
    const headers = { 'x-api-key': await benchWorkspaceKey(sql, 'bench-monitors') };
    const now = Date.now();
    for (let start = 0; start < traceCount; start += 1000) {
      const traces = Array.from({ length: Math.min(1000, traceCount - start) }, (_, k) => {
        const i = start + k;
        const begin = new Date(now - ((i * 7_200_000) / traceCount + 1000));
        return {
          traceId: `t${i}`,
          source: 'sdk',
          name: i % 2 ? 'chat' : 'search',
          environment: i % 3 ? 'production' : 'staging',
          userId: `u${i % 10}`,
          tags: i % 5 ? [] : ['beta'],
          spans: [
            {
              spanId: 'root',
              name: 'root',
              kind: 'llm.chat',
              model: i % 4 ? 'gpt-4o' : 'claude',
              startTime: begin.toISOString(),
              endTime: new Date(begin.getTime() + 100 + (i % 900)).toISOString(),
              durationMs: 100 + (i % 900),
              status: i % 17 ? 'ok' : 'error',
              inputTokens: 100,
              outputTokens: 50,
              totalTokens: 150,
              ...(i % 11 ? { costUsd: 0.001 * (i % 7) } : {}),
              input: { text: `question ${i}` },
              output: { text: `answer ${i}` },
            },
          ],
        };
      });
      const res = await app.inject({ method: 'POST', url: '/api/traces', headers, payload: { traces } });
      if (res.statusCode !== 200) throw new Error(`ingest answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
    }
    const scores = Array.from({ length: 2000 }, (_, i) => ({ traceId: `t${i}`, name: 'quality', value: (i % 10) / 10 }));
    await app.inject({ method: 'POST', url: '/api/scores', headers, payload: { scores } });
    for (let i = 0; i < monitorCount; i += 1) {
      const metric = metrics[i % metrics.length]!;
      const res = await app.inject({
        method: 'POST',
        url: '/api/monitors',
        headers,
        payload: {
          name: `m${i}`,
          metric,
          ...(metric === 'score_mean' ? { scoreName: 'quality' } : {}),
          windowSeconds: 3600,
          filters: filterSets[Math.floor(i / metrics.length) % filterSets.length],
          condition: i % 2 ? { kind: 'threshold', direction: 'above', value: 1e9 } : { kind: 'change', direction: 'above', percent: 1e5 },
        },
      });
      if (res.statusCode !== 201) throw new Error(`monitor answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
    }
    const enqueue = enqueueEvent;
    const measured = createMonitorEvaluator({ sql, metrics: monitorMetricReader(stores.clickhouse.client), enqueue });
    const baseline = createMonitorEvaluator({
      sql,
      metrics: {
        measure: async () => {
          await sql`select 1`;
          return 0;
        },
      },
      enqueue,
    });
    const roundOf = async (evaluator: typeof measured) => {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const counts = await evaluator.evaluateAll();
      const used = process.cpuUsage(cpu);
      return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000, counts };
    };
    await roundOf(measured); // warm-up
    console.log(`monitors ${monitorCount}, traces ${traceCount}, rounds ${rounds}`);
    const results = { measured: [] as number[][], baseline: [] as number[][] };
    for (let r = 0; r < rounds; r += 1) {
      const b = await roundOf(baseline);
      const m = await roundOf(measured);
      if (m.counts.failed > 0) throw new Error(`${m.counts.failed} monitors failed to evaluate`);
      results.baseline.push([b.wallMs, b.cpuMs]);
      results.measured.push([m.wallMs, m.cpuMs]);
      console.log(
        `round ${r + 1}: evaluation ${m.wallMs.toFixed(0)} ms wall, ${m.cpuMs.toFixed(0)} ms CPU (service process); baseline ${b.wallMs.toFixed(0)} ms wall, ${b.cpuMs.toFixed(0)} ms CPU`,
      );
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const wall = median(results.measured.map((x) => x[0]!));
    const cpu = median(results.measured.map((x) => x[1]!));
    const baseWall = median(results.baseline.map((x) => x[0]!));
    console.log(
      `median round: ${wall.toFixed(0)} ms wall (${(wall / baseWall).toFixed(1)}× the baseline's ${baseWall.toFixed(0)} ms), ` +
        `${cpu.toFixed(0)} ms CPU; one round a minute = ${((cpu / 60_000) * 100).toFixed(2)}% of one core, ` +
        `wall ${((wall / 60_000) * 100).toFixed(2)}% of the minute`,
    );
    await app.close();
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
