import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { privateAncestor } from '../../src/stores/postgres.js';
import { repoRoot, startService, type ServiceProcess } from '../support/process.js';

/**
 * Embedded PostgreSQL across crashes: the service recovers by itself whatever its last run
 * left (an orphaned server, a stale postmaster.pid naming a reused PID), and the server never
 * outlives the service.
 */

const dataDir = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-crash-'));
const apiKey = 'lpk_e2e_crash_key_0123456789abcdef';
const env = { LOUPE_DATA_DIR: dataDir, LOUPE_BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'info' };
const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};
const postgresPid = () => Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
/** The service's node process: the parent of the PostgreSQL server it started. */
const servicePid = (pg: number) => Number(readFileSync(`/proc/${pg}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
async function until(check: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}
async function me() {
  return (await fetch(`${service!.baseUrl}/api/me`, { headers: { 'x-api-key': apiKey } })).status;
}

describe('embedded PostgreSQL after kill -9', () => {
  it('stops the server when the service dies, and restarts after a crash of the service, of both, and over a reused PID', async () => {
    service = await startService(env);
    expect(await me()).toBe(200);

    // The service alone: its PostgreSQL must not outlive it.
    let pg = postgresPid();
    process.kill(servicePid(pg), 'SIGKILL');
    expect(await until(() => !alive(pg), 20_000)).toBe(true);
    service = await startService(env);
    expect(await me()).toBe(200);

    // The service and its PostgreSQL together.
    pg = postgresPid();
    process.kill(servicePid(pg), 'SIGKILL');
    process.kill(pg, 'SIGKILL');
    service = await startService(env);
    expect(await me()).toBe(200);

    // A postmaster.pid naming a live process that is not PostgreSQL (a reused PID).
    pg = postgresPid();
    process.kill(servicePid(pg), 'SIGKILL');
    process.kill(pg, 'SIGKILL');
    await until(() => !alive(pg), 5_000);
    const stranger = spawn('sleep', ['60'], { stdio: 'ignore' });
    const lines = readFileSync(pidFile, 'utf8').split('\n');
    lines[0] = String(stranger.pid);
    writeFileSync(pidFile, lines.join('\n'));
    try {
      service = await startService(env);
      expect(await me()).toBe(200);
    } finally {
      stranger.kill('SIGKILL');
    }

    // A clean stop stops PostgreSQL too.
    pg = postgresPid();
    expect(await service.stop()).toBe(0);
    service = undefined;
    expect(alive(pg)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
  }, 240_000);
});

describe('embedded PostgreSQL killed alone', () => {
  it('is restarted by the service; meanwhile requests fail fast and /healthz answers within a second, naming it', async () => {
    service = await startService(env);
    const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
    const timed = async (url: string, init: RequestInit = {}) => {
      const started = Date.now();
      const res = await fetch(`${service!.baseUrl}${url}`, { headers, signal: AbortSignal.timeout(5_000), ...init });
      return {
        res,
        ms: Date.now() - started,
        body: (await res.json()) as { data?: unknown; error?: { message: string; details: Record<string, unknown> } },
      };
    };
    expect(
      (await timed('/api/prompt', { method: 'POST', body: JSON.stringify({ name: 'before-kill', systemPrompt: 'x' }) })).res.status,
    ).toBe(201);
    const pg = postgresPid();
    const serviceBefore = servicePid(pg);
    process.kill(pg, 'SIGKILL');

    // While it is down: /healthz within a second, 503 naming PostgreSQL; API requests 503 at once, with Retry-After.
    // (For a moment after the kill, the server's leftover backends may still answer on open connections.)
    let sawDown = false;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const health = await timed('/healthz');
      expect(health.ms).toBeLessThan(1_000);
      if (health.res.status === 200 && sawDown) break;
      if (health.res.status === 503) {
        expect(health.body.error!.details).toMatchObject({ status: 'unavailable', postgres: 'unavailable' });
        expect(health.body.error!.message).toMatch(/postgres/i);
        sawDown = true;
        const me = await timed('/api/me');
        if (me.res.status === 503) {
          expect(me.ms).toBeLessThan(1_000);
          expect(me.res.headers.get('retry-after')).toMatch(/^\d+$/);
        }
      }
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 100));
    }

    // Restarted by the service (a new server, the same service), and prompts and keys work again.
    const restarted = postgresPid();
    expect(restarted).not.toBe(pg);
    expect(alive(restarted)).toBe(true);
    expect(servicePid(restarted)).toBe(serviceBefore);
    expect(await me()).toBe(200);
    const created = await timed('/api/prompt', { method: 'POST', body: JSON.stringify({ name: 'after-kill', systemPrompt: 'y' }) });
    expect(created.res.status).toBe(201);
    const names = ((await timed('/api/prompt')).body.data as Array<{ name: string }>).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['before-kill', 'after-kill']));
    // Each step told in the log: the stop at error level, the restart.
    expect(service.output()).toMatch(/"level":50.*the embedded PostgreSQL stopped \(signal SIGKILL\); restarting it/);
    expect(service.output()).toMatch(/"level":30.*"attempt":\d+.*the embedded PostgreSQL restarted/);
    expect(await service.stop()).toBe(0);
    service = undefined;
    expect(alive(restarted)).toBe(false);
  }, 120_000);
});

describe('a data directory inside a private folder', () => {
  it('stops before starting anything, with one message naming the folder and the fix (as root)', () => {
    const outer = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-private-'));
    chmodSync(outer, 0o700);
    try {
      expect(privateAncestor(path.join(outer, 'data', 'postgres'), 0)).toBe(outer);
      expect(privateAncestor(path.join(outer, 'data', 'postgres'), 1000)).toBeUndefined(); // not root: no other user involved
      if (process.getuid?.() !== 0) return; // the service itself can only be run as root by root
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], {
        cwd: repoRoot,
        env: { ...process.env, LOUPE_DATA_DIR: path.join(outer, 'data'), PORT: '0', LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(`cannot enter ${outer} (mode 0700)`);
      expect(run.stderr).toContain('LOUPE_DATA_DIR');
      expect(existsSync(path.join(outer, 'data', 'postgres'))).toBe(false);
    } finally {
      rmSync(outer, { recursive: true, force: true });
    }
  });
});
