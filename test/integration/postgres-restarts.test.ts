import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerRestarts, type RestartLog } from '../../src/stores/postgres-restarts.js';

/**
 * The restarts of a server that stops while the service runs (src/stores/postgres-restarts.ts),
 * with real processes standing in for the server: a restart after a kill, the attempts bounded
 * with a growing delay, each attempt and the outcome logged, and none after `stop`.
 */

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A running process (a `sleep`), as a started server is. */
async function running(): Promise<ChildProcess> {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child;
}

function recordingLog() {
  const lines: Array<{ level: 'info' | 'error'; message: string; fields: object; at: number }> = [];
  const log: RestartLog = {
    info: (fields, message) => lines.push({ level: 'info', message, fields, at: Date.now() }),
    error: (fields, message) => lines.push({ level: 'error', message, fields, at: Date.now() }),
  };
  return { lines, log };
}

async function until(check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return check();
}

describe('restarts of a server that stopped', () => {
  it('restarts a killed server, says it is restarting meanwhile, and watches the new one', async () => {
    const { lines, log } = recordingLog();
    let launches = 0;
    const restarts = new ServerRestarts(
      'the server',
      async () => {
        launches += 1;
        return await running();
      },
      log,
      { attempts: 3, firstDelayMs: 50, maxDelayMs: 200 },
    );
    const first = await running();
    restarts.watch(first);
    expect(restarts.condition()).toEqual({ state: 'up' });

    first.kill('SIGKILL');
    expect(await until(() => restarts.condition().state === 'restarting')).toBe(true);
    expect(restarts.condition()).toMatchObject({ reason: 'the server stopped (signal SIGKILL)', attempt: 1, attempts: 3 });
    expect(await until(() => restarts.condition().state === 'up')).toBe(true);
    expect(launches).toBe(1);
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['error', 'the server stopped (signal SIGKILL); restarting it'],
      ['info', 'the server restarted'],
    ]);

    // The new one is watched too.
    children.at(-1)!.kill('SIGKILL');
    expect(await until(() => launches === 2 && restarts.condition().state === 'up')).toBe(true);
    expect(await restarts.stop()).toBe(true);
  });

  it('tries a bounded number of times with a growing delay, logging each, then stays down and says why', async () => {
    const { lines, log } = recordingLog();
    const attemptsAt: number[] = [];
    const restarts = new ServerRestarts(
      'the server',
      async () => {
        attemptsAt.push(Date.now());
        // A real start that fails: the process exits at once.
        const child = spawn('false', [], { stdio: 'ignore' });
        await new Promise((resolve) => child.once('exit', resolve));
        throw new Error('it exited early: could not bind the port');
      },
      log,
      { attempts: 4, firstDelayMs: 40, maxDelayMs: 120 },
    );
    const first = await running();
    const stoppedAt = Date.now();
    restarts.watch(first);
    first.kill('SIGKILL');
    expect(await until(() => restarts.condition().state === 'down')).toBe(true);
    expect(attemptsAt).toHaveLength(4);
    // Delays 40, 80, 120, 120 ms (doubled, capped): each wait at least its delay.
    const waits = attemptsAt.map((at, i) => at - (i === 0 ? stoppedAt : attemptsAt[i - 1]!));
    [40, 80, 120, 120].forEach((delay, i) => expect(waits[i]).toBeGreaterThanOrEqual(delay - 5));
    expect(restarts.condition()).toEqual({
      state: 'down',
      reason:
        'the server stopped (signal SIGKILL); 4 restarts failed (last: it exited early: could not bind the port); restart the service',
    });
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['error', 'the server stopped (signal SIGKILL); restarting it'],
      ['error', 'restart 1 of the server failed; trying again'],
      ['error', 'restart 2 of the server failed; trying again'],
      ['error', 'restart 3 of the server failed; trying again'],
      ['error', 'the server could not be restarted; it stays down'],
    ]);
    // No more attempts after the bound.
    await new Promise((r) => setTimeout(r, 300));
    expect(attemptsAt).toHaveLength(4);
    expect(await restarts.stop()).toBe(false);
  });

  it('does not restart a server stopped on purpose', async () => {
    const { lines, log } = recordingLog();
    let launches = 0;
    const restarts = new ServerRestarts(
      'the server',
      async () => {
        launches += 1;
        return await running();
      },
      log,
      { attempts: 3, firstDelayMs: 10, maxDelayMs: 10 },
    );
    const first = await running();
    restarts.watch(first);
    expect(await restarts.stop()).toBe(true);
    first.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    expect(launches).toBe(0);
    expect(lines).toEqual([]);
  });
});
