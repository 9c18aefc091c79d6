import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createClient, parseError, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { readMigrations } from './postgres.js';
import { renderClickhouseMigration, splitStatements, type DdlOptions } from './clickhouse-ddl.js';
import { bindParameters } from './embedded-parameters.js';
import { StatementSessions, type EngineConnection, type EngineSession, type RawInsertParams } from './statement-sessions.js';

export type { ClickHouseClient };

export interface ClickhouseStore {
  client: ClickHouseClient;
  /**
   * The client ingestion writes through (the group-commit writer's). On a server, the same
   * client: its statements run concurrently over HTTP. In the embedded engine, a session of its
   * own: the engine runs one session's statements one after another, so with one session every
   * read would wait behind the writer's flush (and every flush behind the reads).
   */
  writeClient: ClickHouseClient;
  database: string;
  embedded: boolean;
  close(): Promise<void>;
}

const migrationsDir = fileURLToPath(new URL('../../clickhouse/', import.meta.url));

/**
 * Settings of every statement, in both modes, so a server and the embedded engine answer
 * alike: 64-bit integers as JSON numbers (counts and token sums stay far below 2^53); NaN
 * and infinities as JSON null (an empty group's average); inserts through a cluster's
 * Distributed tables handed to their shard before they return, so a summary recomputed
 * right after sees its spans (no effect on one node).
 *
 * A server takes them with every request. The embedded connection would prefix every
 * statement with a `SET` per setting, and `SET` stays in its session, so it gets them once,
 * when opened. For the same reason a setting meant for one statement only (max_threads of a
 * key read, say) goes in that statement's own SETTINGS clause, never in `clickhouse_settings`.
 */
const sharedSettings: ClickHouseSettings = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_denormals: 0,
  date_time_input_format: 'best_effort',
  insert_distributed_sync: 1,
};

export interface ClickhouseOptions {
  url?: string;
  user?: string;
  password?: string;
  database: string;
  dataDir: string;
  /**
   * The embedded engine's OS priority (nice value) for the statements of the main session, the
   * reads' (LOUPE_REQUEST_NICE); applied by the engine with CAP_SYS_NICE only. A server keeps
   * its own priorities.
   */
  readNice?: number;
}

let embeddedPath: string | undefined;

/**
 * The service's own sessions, embedded: their statements' text may be long, and their answers
 * are short, so the engine formats them in the statement's thread.
 *
 * A session whose parameters are bound here sends their values in the text (a flush's key read
 * names up to 10,000 traces): the text may be longer than the engine's default 256 KiB. The
 * engine formats an answer in threads of its pool by default, a hand-off to another thread and
 * back for every statement: a key read's answer is a few kilobytes, and under a busy writer
 * each hand-off waits for a core (docs/benchmarks.md, eleventh pass). Callers' SQL (the SQL
 * endpoint's session) keeps the engine's default for its larger answers.
 */
const ownSessionSettings: Record<string, number> = {
  max_query_size: 64 * 1024 * 1024,
  output_format_parallel_formatting: 0,
};

/**
 * The statements that set up a new embedded session: its current database (the embedded
 * connection does not pass the client's `database` on to the engine, and a session keeps its
 * USE, so unqualified names resolve as on a server), then the shared settings, with the service's
 * own where `bindHere`, then anything of the caller's (an OS priority).
 */
function sessionSetup(database: string, bindHere: boolean, extra: string[] = []): string[] {
  const settings = { ...sharedSettings, ...(bindHere && ownSessionSettings) };
  return [
    `USE ${database}`,
    ...Object.entries(settings).map(([name, value]) => `SET ${name} = ${typeof value === 'string' ? `'${value}'` : String(value)}`),
    ...extra,
  ];
}

type EmbeddedConnection = EngineConnection;

type RawInsert = (params: RawInsertParams) => Promise<unknown>;

/** A client of the embedded engine carries its raw insert: the engine's library takes a statement's rows as bytes, as they are. */
type WithRawInsert = ClickHouseClient & { readonly rawInsert: RawInsert };

const rawInsertOf = (client: ClickHouseClient): RawInsert | undefined =>
  'rawInsert' in client ? (client as WithRawInsert).rawInsert : undefined;

/**
 * Inserts `rows`, JSONEachRow lines as UTF-8 bytes, into `table` as they are: to the embedded
 * engine through its raw insert, or to a server as the request's body. Neither makes a JS string
 * of them: a flush's rows are megabytes, and a string of text that is not ASCII is converted to
 * UTF-8 and back on the service's thread at several milliseconds a megabyte (docs/benchmarks.md,
 * eleventh pass). With `columns`, each line is an array of those columns' values in their order
 * (JSONCompactEachRow): the engine matches no key names, and a line is shorter.
 */
export async function insertJsonLines(client: ClickHouseClient, table: string, rows: Buffer, columns?: readonly string[]): Promise<void> {
  if (rows.length === 0) return;
  const format = columns ? 'JSONCompactEachRow' : 'JSONEachRow';
  const raw = rawInsertOf(client);
  if (raw) {
    try {
      await raw({ table, values: rows, format, ...(columns && { columns }) });
    } catch (error) {
      // As the embedded connection reports any other statement's failure: the engine's code and type.
      throw Object.assign(parseError(error instanceof Error ? error.message : String(error)), { cause: error });
    }
    return;
  }
  const target = columns ? `${table} (${columns.join(', ')})` : table;
  const result = await client.exec({ query: `INSERT INTO ${target} FORMAT ${format}`, values: Readable.from([rows]) });
  result.stream.resume();
  await finished(result.stream);
}

/** The client with the raw insert of its embedded connection. */
function withRawInsert(client: ClickHouseClient, connection: EmbeddedConnection): WithRawInsert {
  const extension = (connection as unknown as { chdb?: { rawInsert?: RawInsert } }).chdb;
  if (typeof extension?.rawInsert !== 'function') throw new Error('The embedded engine offers no raw insert');
  return Object.assign(client, { rawInsert: extension.rawInsert });
}

/**
 * A connection to the embedded engine whose statements each get a session of their own
 * (statement-sessions.ts: a failed statement's session is closed, so its leftover output never
 * reaches another statement), every session set up by `setup` when opened. With `bindHere`, its
 * statements' parameters are bound before the engine sees them (embedded-parameters.ts, decision
 * 084): the engine's library runs every statement with parameters of the process one after
 * another, all sessions together.
 */
async function createEmbeddedConnection(
  dir: string,
  options: { bindHere: boolean; setup: string[]; sessions: number },
): Promise<EmbeddedConnection> {
  // The engine binds one data directory per process; a second one is a programming error.
  if (embeddedPath !== undefined && embeddedPath !== dir) {
    throw new Error(`The embedded ClickHouse engine is bound to ${embeddedPath} in this process; cannot open ${dir}`);
  }
  embeddedPath = dir;
  mkdirSync(dir, { recursive: true });
  const { createChdbConnection } = await import('chdb/connection');
  const openSession = async (): Promise<EngineSession> => {
    // chdb types its Connection against its own copy of @clickhouse/client-common; the shape is the same.
    const session = createChdbConnection({ path: dir }) as unknown as EngineSession;
    try {
      for (const query of options.setup) await session.command({ query });
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  };
  const connection = new StatementSessions(openSession, options.sessions);
  if (!options.bindHere) return connection;
  type Params = { query: string; query_params?: Record<string, unknown> };
  const bound = <T extends Params>(params: T): T =>
    params.query_params && Object.keys(params.query_params).length > 0
      ? { ...params, query: bindParameters(params.query, params.query_params), query_params: undefined }
      : params;
  return new Proxy(connection, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'query' || property === 'command' || property === 'exec') {
        return (params: Params) => (value as (p: Params) => unknown).call(target, bound(params));
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
}

export async function openClickhouse(options: ClickhouseOptions): Promise<ClickhouseStore> {
  if (options.url) {
    const common = { clickhouse_settings: sharedSettings };
    // Create the database first through a client without one (it may not exist yet).
    const admin = createClient({ ...common, url: options.url, username: options.user ?? 'default', password: options.password ?? '' });
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${options.database}` });
    await admin.close();
    const client = createClient({
      ...common,
      url: options.url,
      username: options.user ?? 'default',
      password: options.password ?? '',
      database: options.database,
    });
    return { client, writeClient: client, database: options.database, embedded: false, close: () => client.close() };
  }
  const dir = path.resolve(options.dataDir, 'clickhouse');
  // The configured database is made before any session's USE names it (one statement of the
  // first session, which then sets itself up as every later one does).
  const nice = options.readNice ? [`SET os_thread_priority = ${Math.trunc(options.readNice)}`] : [];
  const connection = await createEmbeddedConnection(dir, {
    bindHere: true,
    setup: [`CREATE DATABASE IF NOT EXISTS ${options.database}`, ...sessionSetup(options.database, true, nice)],
    sessions: 1,
  });
  const client = withRawInsert(createClient({ connection, database: options.database }), connection);
  // Opens the first session now: it makes the database that the writer's sessions USE.
  await client.command({ query: 'SELECT 1' });
  // The writer's statements run at a lower OS priority than reads and than the service's own
  // thread, which answers requests: on a few cores a flush then yields to them, and the flushes
  // grow larger instead (docs/benchmarks.md, 2026-11-23). The engine applies it only with
  // CAP_SYS_NICE (root, or a container granted it); elsewhere it is ignored.
  const writer = await openClickhouseSession(options, options.database, { bindHere: true, setup: ['SET os_thread_priority = 19'] });
  return {
    client,
    writeClient: writer.client,
    database: options.database,
    embedded: true,
    close: async () => {
      await writer.close();
      await client.close();
    },
  };
}

/**
 * A second client whose unqualified table names resolve in `database` (the SQL endpoint runs
 * callers' queries in an empty one, src/sql/session.ts). On a server that is the client's
 * database; in the embedded engine a second session on the same directory, which keeps its
 * own USE and its own SETs apart from the main session's.
 */
export async function openClickhouseSession(
  options: ClickhouseOptions,
  database: string,
  session: {
    /** The service's own statements (the writer's): parameters bound before the embedded engine sees them. Callers' SQL: false. */
    bindHere?: boolean;
    /** Statements that set up each embedded session after the shared ones (an OS priority). */
    setup?: string[];
    /** Embedded sessions that may run statements at once (one statement each); 1 runs them in order. */
    sessions?: number;
  } = {},
): Promise<ClickhouseStore> {
  if (options.url) {
    const client = createClient({
      clickhouse_settings: sharedSettings,
      url: options.url,
      username: options.user ?? 'default',
      password: options.password ?? '',
      database,
    });
    return { client, writeClient: client, database, embedded: false, close: () => client.close() };
  }
  const bindHere = session.bindHere ?? false;
  const connection = await createEmbeddedConnection(path.resolve(options.dataDir, 'clickhouse'), {
    bindHere,
    setup: sessionSetup(database, bindHere, session.setup),
    sessions: session.sessions ?? 1,
  });
  const client = withRawInsert(createClient({ connection, database }), connection);
  // The first session opens here, so a database that does not exist fails the open, not a later statement.
  await client.command({ query: 'SELECT 1' });
  return { client, writeClient: client, database, embedded: true, close: () => client.close() };
}

/**
 * Applies the numbered files of `clickhouse/` that are not yet recorded, up to `until` when
 * given (tests of a migration start from the schema before it). Callers run this under the
 * PostgreSQL migration lock, so two instances never apply a file twice.
 */
export async function migrateClickhouse(client: ClickHouseClient, options: DdlOptions, until = Infinity): Promise<string[]> {
  const ddl: DdlOptions = { ...options };
  const recordTable = renderClickhouseMigration(
    `CREATE TABLE IF NOT EXISTS schema_migrations {{on_cluster}} (
       version UInt32, name String, applied_at DateTime DEFAULT now()
     ) ENGINE = {{engine:MergeTree()}} ORDER BY version`,
    { ...ddl, table: 'schema_migrations' },
  );
  for (const statement of recordTable) await client.command({ query: statement });
  const rows = await client.query({ query: 'SELECT version FROM schema_migrations', format: 'JSONEachRow' });
  const done = new Set((await rows.json<{ version: number }>()).map((r) => Number(r.version)));
  const applied: string[] = [];
  for (const migration of await readMigrations(migrationsDir)) {
    if (done.has(migration.version) || migration.version > until) continue;
    for (const statement of splitStatements(migration.sql)) {
      for (const rendered of renderClickhouseMigration(statement, ddl)) {
        await client.command({ query: rendered });
      }
    }
    await client.insert({
      table: 'schema_migrations',
      values: [{ version: migration.version, name: migration.name }],
      format: 'JSONEachRow',
    });
    applied.push(migration.name);
  }
  return applied;
}
