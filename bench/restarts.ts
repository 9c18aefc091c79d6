/**
 * Restarts after a crash, embedded mode:
 * `npm run bench -- restarts [--rounds 5] [--mode alone|both|all] [--port 3150]`.
 *
 * Starts the service (`node src/main.ts start`, embedded PostgreSQL and ClickHouse in a temp
 * directory), then `rounds` times kills it with SIGKILL and starts it again at once; then
 * `rounds` times kills the service and its PostgreSQL together. Counts the starts that answered
 * /healthz within 60 s, and, after a kill of the service alone, whether its PostgreSQL was
 * still running 3 s later (an orphan). `--mode` runs one kind of kill only, so that ten of
 * each fit in runs of under two minutes on a busy host (a start takes 5 to 15 s there).
 * Only processes and HTTP, so it runs on older code too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serviceNodeFlags } from '../src/node-flags.js';

const root = fileURLToPath(new URL('../', import.meta.url));

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const n = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
  return n;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(args: string[]) {
  const rounds = option(args, 'rounds', 5);
  const modeAt = args.indexOf('--mode');
  const mode = modeAt >= 0 ? args[modeAt + 1] : 'all';
  if (mode !== 'alone' && mode !== 'both' && mode !== 'all') throw new Error('--mode must be alone, both or all');
  const port = option(args, 'port', 3150);
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-restarts-'));
  const pidFile = path.join(dir, 'postgres', 'postmaster.pid');
  let child: ChildProcess | undefined;
  let output = '';

  const startTimes: number[] = [];
  async function start(): Promise<boolean> {
    const began = performance.now();
    try {
      return await startOnce();
    } finally {
      startTimes.push(Math.round(performance.now() - began));
    }
  }
  async function startOnce(): Promise<boolean> {
    output = '';
    child = spawn(process.execPath, [...serviceNodeFlags, '--import', 'tsx', 'src/main.ts', 'start'], {
      cwd: root,
      env: { ...process.env, LOUPE_DATA_DIR: dir, PORT: String(port), LOUPE_OTLP_GRPC_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) return false;
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200) return true;
      } catch {
        // not yet
      }
      await sleep(100);
    }
    child.kill('SIGKILL');
    return false;
  }
  const postgresPid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined);

  const results = { serviceAlone: { started: 0, orphans: 0 }, serviceAndPostgres: { started: 0 } };
  const failures: string[] = [];
  try {
    if (!(await start())) throw new Error(`first start failed:\n${output}`);
    for (let i = 0; mode !== 'both' && i < rounds; i++) {
      const pg = postgresPid();
      child!.kill('SIGKILL');
      await new Promise((r) => child!.once('exit', r));
      if (await start()) results.serviceAlone.started += 1;
      else failures.push(`service alone, round ${i + 1}: ${output.trim().split('\n').slice(-3).join(' | ')}`);
      // The killed service's PostgreSQL must be gone (stopped, not left running or attached to).
      await sleep(3000);
      if (pg !== undefined && alive(pg)) results.serviceAlone.orphans += 1;
    }
    for (let i = 0; mode !== 'alone' && i < rounds; i++) {
      const pg = postgresPid();
      child!.kill('SIGKILL');
      if (pg !== undefined) process.kill(pg, 'SIGKILL');
      await new Promise((r) => child!.once('exit', r));
      if (await start()) results.serviceAndPostgres.started += 1;
      else failures.push(`service and PostgreSQL, round ${i + 1}: ${output.trim().split('\n').slice(-3).join(' | ')}`);
    }
  } finally {
    const pg = postgresPid();
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    await sleep(1000);
    const left = pg !== undefined && alive(pg);
    if (left) process.kill(pg, 'SIGKILL');
    if (mode !== 'both') {
      console.log(
        `kill -9 of the service alone: ${results.serviceAlone.started} of ${rounds} restarts answered /healthz; ` +
          `its PostgreSQL still running 3 s after the kill: ${results.serviceAlone.orphans} of ${rounds}`,
      );
    }
    if (mode !== 'alone') {
      console.log(
        `kill -9 of the service and its PostgreSQL: ${results.serviceAndPostgres.started} of ${rounds} restarts answered /healthz`,
      );
    }
    console.log(`PostgreSQL still running after the final clean stop: ${left ? 'yes' : 'no'}`);
    console.log(`start times (ms), first start included: ${startTimes.join(' ')}`);
    for (const f of failures) console.log(`  failed: ${f}`);
    rmSync(dir, { recursive: true, force: true });
  }
}
