import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';

/**
 * The embedded PostgreSQL server as a process: what a postmaster.pid left by an earlier run
 * means, stopping a server whose service died, the watchdog that stops it with the service,
 * and the folder check made before starting as root (postgres.ts startEmbeddedPostgres).
 */

/** A data directory problem found before anything starts: one message, naming the fix. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `/proc/<pid>/stat` as [state, parent pid]; undefined where there is no /proc or no such process. */
function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: read after the last ')'.
    const [state = '', ppid = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is a live PostgreSQL server of `dataDir`: alive, not a zombie, and (where
 * /proc exists) a postgres process started on that directory, so a reused PID never counts.
 */
function isOurPostgres(pid: number, dataDir: string): boolean {
  if (!isAlive(pid)) return false;
  if (!existsSync('/proc/self/stat')) return true; // no /proc: the connection check decides
  const stat = procStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return false;
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return path.basename(args[0] ?? '').startsWith('postgres') && args.includes(dataDir);
  } catch {
    return false;
  }
}

/** Whether `pid` is a live Node.js process (the service that started a server is its parent). */
function isLiveNode(pid: number): boolean {
  const stat = procStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return false;
  try {
    return path.basename(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '').startsWith('node');
  } catch {
    return false;
  }
}

/** Whether a PostgreSQL server answers on the port with our credentials, within `timeoutMs`. */
async function answers(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sql = postgres(`postgres://loupe:loupe@127.0.0.1:${port}/postgres`, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      await sql`select 1`;
      return true;
    } catch {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 250));
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
    }
  }
}

/** Stops a PostgreSQL server by PID: fast shutdown, then immediate after 15 s, then kill. */
async function stopPostgresProcess(pid: number): Promise<void> {
  const signals: Array<[NodeJS.Signals, number]> = [
    ['SIGINT', 15_000],
    ['SIGQUIT', 5_000],
    ['SIGKILL', 5_000],
  ];
  for (const [signal, waitMs] of signals) {
    try {
      process.kill(pid, signal);
    } catch {
      return; // gone
    }
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      const stat = procStat(pid);
      if (!isAlive(pid) || stat?.state === 'Z') return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * What a postmaster.pid found at start-up means. A server that is ours, answers, and whose
 * parent (the service that started it) is alive belongs to a running Loupe server: the CLI
 * attaches to it. A server of ours whose service died (an orphan, after a crash) is stopped,
 * so that this process starts, owns and stops its own. Anything else (a dead, zombie or
 * reused PID, a server that never answers) leaves a stale file, removed before starting.
 */
export async function existingServer(dataDir: string, log: (message: string) => void): Promise<number | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && isOurPostgres(pid, dataDir)) {
    const parent = procStat(pid)?.ppid;
    // Without /proc the parent cannot be told: a server that answers is attached to, as before.
    const owned = !existsSync('/proc/self/stat') || (parent !== undefined && parent > 1 && isLiveNode(parent));
    if (owned && Number.isInteger(port) && (await answers(port, 10_000))) return port;
    log(`stopping the embedded PostgreSQL (PID ${pid}) left running by a process that ended`);
    await stopPostgresProcess(pid);
  }
  rmSync(pidFile, { force: true });
  return undefined;
}

/**
 * As root, PostgreSQL runs as the user `postgres`, which must enter every folder above its
 * data directory. A private folder on the way (a `mktemp -d` folder, /root) makes initdb fail
 * with a bare "Permission denied": found before anything starts, and named with the fix.
 */
export function privateAncestor(dir: string, uid = process.getuid?.()): string | undefined {
  if (uid !== 0) return undefined;
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    // A folder not made yet will be made by this process, open to others (0755).
    if (existsSync(current) && (statSync(current).mode & 0o001) === 0) return current;
    if (current === path.dirname(current)) return undefined;
  }
}

/**
 * While the service runs, a small shell watches it and stops the embedded PostgreSQL when the
 * service is gone (a crash, kill -9), so the server never outlives it. Stopped by `stop`.
 */
export function startWatchdog(postgresPid: number): ChildProcess | undefined {
  if (process.platform === 'win32') return undefined;
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -INT ${postgresPid} 2>/dev/null`;
  const watchdog = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  watchdog.on('error', () => {});
  watchdog.unref();
  return watchdog;
}
