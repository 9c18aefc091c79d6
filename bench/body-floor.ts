/**
 * What the body's rate floor costs (decision 090): `npm run bench -- body-floor [--seconds 5]
 * [--rounds 3] [--connections 16] [--kib 16]`.
 *
 * One process holds the stores and two listening apps on them, one with the floor
 * (LOUPE_BODY_MIN_RATE at its default) and one without (0). A child process posts a `--kib` KiB
 * JSON body to POST /api/traces over keep-alive connections, alternating between the two for a
 * few rounds, and the median requests per second of each are compared. The body is read and
 * parsed whole, then refused (400, `traces` is not a list), so the run measures the body's way
 * in and not the trace store.
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

/** Child role: post the body to one URL for `seconds`; answers the count of 400s (read and refused) and anything else. */
async function load(url: string, key: string, seconds: number, connections: number, kib: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const body = Buffer.from(JSON.stringify({ traces: 'not a list', pad: 'x'.repeat(kib * 1024) }));
  const until = performance.now() + seconds * 1000;
  let read = 0;
  let other = 0;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        url,
        { agent, method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 400) read += 1;
            else other += 1;
            resolve();
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) await once();
    }),
  );
  agent.destroy();
  return { rps: read / ((performance.now() - started) / 1000), other };
}

const drive = (url: string, key: string, seconds: number, connections: number, kib: number) =>
  forkLoad(self, [url, key, String(seconds), String(connections), String(kib)]);

export async function run(args: string[]) {
  const seconds = option(args, 'seconds', 5);
  const rounds = option(args, 'rounds', 3);
  const connections = option(args, 'connections', 16);
  const kib = option(args, 'kib', 16);
  const { buildApp } = await import('../src/app.js');

  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-body-floor-'));
  const { config, log, stores } = await openBenchStores(dir);
  try {
    const sql = stores.postgres.sql;
    const key = await benchWorkspaceKey(sql, 'bench');
    const deps = { sql, clickhouse: stores.clickhouse.client, log };
    const floored = await buildApp({ ...deps, config });
    const unfloored = await buildApp({ ...deps, config: { ...config, LOUPE_BODY_MIN_RATE: 0 } });
    const urls = {
      without: `${await unfloored.listen({ port: 0, host: '127.0.0.1' })}/api/traces`,
      with: `${await floored.listen({ port: 0, host: '127.0.0.1' })}/api/traces`,
    };
    const results = { without: [] as number[], with: [] as number[] };
    await drive(urls.without, key, 1, connections, kib); // warm-up: connections, JIT, the key in cache
    await drive(urls.with, key, 1, connections, kib);
    for (let round = 0; round < rounds; round += 1) {
      for (const kind of ['without', 'with'] as const) {
        const { rps, other } = await drive(urls[kind], key, seconds, connections, kib);
        if (other > 0) throw new Error(`${other} requests did not answer 400 (${kind} the floor)`);
        results[kind].push(rps);
      }
    }
    await floored.close();
    await unfloored.close();
    const without = medianOf(results.without);
    const withFloor = medianOf(results.with);
    console.log(
      `POST /api/traces with a ${kib} KiB body, read and refused, ${connections} keep-alive connections, ${rounds} rounds of ${seconds} s each`,
    );
    console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}); load generator in a separate process`);
    console.log(`without the floor: ${without.toFixed(0)} req/s (rounds: ${results.without.map((r) => r.toFixed(0)).join(', ')})`);
    console.log(`with the floor:    ${withFloor.toFixed(0)} req/s (rounds: ${results.with.map((r) => r.toFixed(0)).join(', ')})`);
    console.log(`ratio with/without: ${(withFloor / without).toFixed(2)}`);
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--role' && process.argv[3] === 'load') {
  const [url, key, seconds, connections, kib] = process.argv.slice(4);
  const result = await load(url!, key!, Number(seconds), Number(connections), Number(kib));
  process.send!(result);
  process.disconnect();
}
