/**
 * Rate-limit overhead: `npm run bench -- auth [--seconds 5] [--rounds 3] [--connections 32] [--max-lease 100]`.
 *
 * One process holds the stores (embedded PostgreSQL and ClickHouse in a temp directory) and two
 * listening apps on them: one with the per-organization limits, one without. A child process
 * drives GET /api/me over keep-alive connections, alternating between the two for a few rounds,
 * and the median requests per second of each are compared. The organization's limits are set
 * far above what the run can reach, so every request is counted and admitted. `--max-lease 1`
 * makes each reservation cover only the requests waiting for one, the least batching there is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchWorkspaceKey, openBenchStores } from './bench-service.js';
import { forkLoad, medianOf } from './load-child.js';

const self = fileURLToPath(import.meta.url);

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const n = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
  return n;
}

/** Child role: hammer one URL for `seconds`, answer the count of 200s and anything else. */
async function load(url: string, key: string, seconds: number, connections: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const until = performance.now() + seconds * 1000;
  let ok = 0;
  let other = 0;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(url, { agent, headers: { 'x-api-key': key } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) ok += 1;
          else other += 1;
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) await once();
    }),
  );
  agent.destroy();
  return { rps: ok / ((performance.now() - started) / 1000), other };
}

const drive = (url: string, key: string, seconds: number, connections: number) =>
  forkLoad(self, [url, key, String(seconds), String(connections)]);

export async function run(args: string[]) {
  const seconds = option(args, 'seconds', 5);
  const rounds = option(args, 'rounds', 3);
  const connections = option(args, 'connections', 32);
  const maxLease = option(args, 'max-lease', 100);
  const { buildApp } = await import('../src/app.js');
  const { createRateLimiter } = await import('../src/tenancy/service/rate-limit.js');

  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-auth-'));
  const { config, log, stores } = await openBenchStores(dir);
  try {
    const sql = stores.postgres.sql;
    const key = await benchWorkspaceKey(sql, 'bench');
    const deps = { config, sql, clickhouse: stores.clickhouse.client, log };
    const plain = await buildApp(deps);
    const limited = await buildApp({ ...deps, admit: createRateLimiter(sql, { maxLease }).admit });
    const urls = {
      without: `${await plain.listen({ port: 0, host: '127.0.0.1' })}/api/me`,
      with: `${await limited.listen({ port: 0, host: '127.0.0.1' })}/api/me`,
    };
    const results = { without: [] as number[], with: [] as number[] };
    await drive(urls.without, key, 1, connections); // warm-up: connections, JIT, the key row in cache
    await drive(urls.with, key, 1, connections);
    for (let round = 0; round < rounds; round += 1) {
      for (const kind of ['without', 'with'] as const) {
        const { rps, other } = await drive(urls[kind], key, seconds, connections);
        if (other > 0) throw new Error(`${other} requests did not answer 200 (${kind} limits)`);
        results[kind].push(rps);
      }
    }
    await plain.close();
    await limited.close();
    const without = medianOf(results.without);
    const withLimits = medianOf(results.with);
    console.log(
      `GET /api/me through a listening server, ${connections} keep-alive connections, ${rounds} rounds of ${seconds} s each, max lease ${maxLease}`,
    );
    console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}); load generator in a separate process`);
    console.log(`without limits: ${without.toFixed(0)} req/s (rounds: ${results.without.map((r) => r.toFixed(0)).join(', ')})`);
    console.log(`with limits:    ${withLimits.toFixed(0)} req/s (rounds: ${results.with.map((r) => r.toFixed(0)).join(', ')})`);
    console.log(`ratio with/without: ${(withLimits / without).toFixed(2)}`);
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--role' && process.argv[3] === 'load') {
  const [url, key, seconds, connections] = process.argv.slice(4);
  const result = await load(url!, key!, Number(seconds), Number(connections));
  process.send!(result);
  process.disconnect();
}
