import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { ClickHouseClient } from '../stores/clickhouse.js';
import { AppError } from '../http/wire/errors.js';
import { checkConfinement, ConfinementError, parseExplainAst } from './confine.js';
import { limitError, limitSettings } from './limits.js';
import { bindParameters, quoteString } from '../stores/embedded-parameters.js';
import type { SqlBody, SqlResult, SqlStatistics } from './schemas.js';
import type { SqlSession } from './session.js';

/**
 * One caller's query, from text to answer, in four engine calls' worth of steps (decision 040):
 * 1. the engine formats it (`formatQuerySingleLine`, the text passed as a string literal):
 *    a syntax error or a second statement stops here, and what goes on is the engine's own
 *    rendering of exactly one statement, comments gone;
 * 2. the caller's parameters are written into that as typed literals, the engine parses the
 *    result (`EXPLAIN AST`, which never runs it) and confine.ts checks the tree;
 * 3. it runs inside a statement the service writes: the views of `sqlViews` as CTEs over the
 *    parameterized views of clickhouse/0008, 0014 and 0018, bound to the caller's workspace, the caller's
 *    query as a subquery, and the limits with readonly = 1;
 * 4. in a session whose current database is empty (session.ts), so a bare name reaches only
 *    those CTEs or the query's own.
 */

/** The views a query may read, by the name callers use, and the parameterized view behind each. */
export const sqlViews = {
  spans: 'sql_spans',
  traces: 'sql_traces',
  sessions: 'sql_sessions',
  users: 'sql_users',
  scores: 'sql_scores',
  dataset_run_items: 'sql_dataset_run_items',
} as const;
const viewNames = Object.keys(sqlViews);

const exportFormats = { csv: 'CSVWithNames', jsonl: 'JSONEachRow', parquet: 'Parquet' } as const;
export type ExportFormat = keyof typeof exportFormats;

interface EngineError {
  code: string;
  type: string | undefined;
  message: string;
}

function engineError(error: unknown): EngineError | undefined {
  const e = error as Partial<EngineError> | null;
  return e && typeof e.code === 'string' && /^\d+$/.test(e.code) && typeof e.message === 'string'
    ? { code: e.code, type: e.type, message: e.message }
    : undefined;
}

/**
 * The engine's message, without what would show the service's own statement or names: the
 * "In scope …" echo of the wrapper, "Maybe you meant …" hints at other tables, the database.
 */
export function cleanEngineMessage(message: string, database: string): string {
  const cut = message.search(/[:.]?\s*In scope |\s*Maybe you meant|\s*\(version \d|\s*Stack trace/);
  const text = (cut >= 0 ? message.slice(0, cut) : message).replaceAll(`${database}_sandbox.`, '').replaceAll(`${database}.`, '');
  const trimmed = text.trim().replace(/[:.\s]+$/, '');
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}…` : trimmed;
}

/** Engine errors of a caller's query: limits 422, writes 403, the rest the query's own mistake, 400. */
function toAppError(error: unknown, config: Config): unknown {
  if (error instanceof ConfinementError) return new AppError(error.kind === 'forbidden' ? 'FORBIDDEN' : 'VALIDATION_ERROR', error.message);
  const engine = engineError(error);
  if (!engine) return error;
  const message = cleanEngineMessage(engine.message, config.CLICKHOUSE_DATABASE);
  const limit = limitError(engine.type, message, config);
  if (limit) return limit;
  if (engine.type === 'READONLY' || engine.type === 'ACCESS_DENIED')
    return new AppError('FORBIDDEN', `The query may only read: ${message}`);
  return new AppError('VALIDATION_ERROR', `The query failed: ${message}`, { engineError: engine.type ?? engine.code });
}

/**
 * The caller's parameters written into the engine's rendering of its query, each placeholder
 * as the typed literal the engine itself would put there (`_CAST(<literal>, '<Type>')`,
 * src/stores/embedded-parameters.ts). The embedded engine's library runs every statement it
 * binds parameters for one after another across the whole process, so a query bound there
 * waited behind every other organization's (decision 084); a statement bound here runs beside
 * them, and what the confinement check parses is exactly what runs.
 */
function bindCallerParameters(text: string, parameters: Record<string, unknown>): string {
  try {
    return bindParameters(text, parameters, { identifiers: true });
  } catch (error) {
    const message = error instanceof Error ? error.message.replace('The statement parameter', 'The query parameter') : 'cannot be bound';
    throw new ConfinementError(message, 'invalid');
  }
}

/** Steps 1 and 2: the engine's single-statement rendering of the query, its parameters bound, checked. */
async function confinedText(client: ClickHouseClient, body: SqlBody): Promise<string> {
  const formatted = await client.query({
    query: bindParameters('SELECT formatQuerySingleLine({query:String}) AS text', { query: body.query }),
    format: 'JSONEachRow',
  });
  const [row] = await formatted.json<{ text: string }>();
  const rendered = row?.text ?? '';
  if (!/^(SELECT|WITH|\()\s/i.test(`${rendered} `)) {
    throw new ConfinementError('Only a SELECT (or WITH … SELECT) query is allowed', 'forbidden');
  }
  const text = bindCallerParameters(rendered, body.parameters ?? {});
  // EXPLAIN in a subquery: its output gets this statement's format, and an output clause of
  // the caller's (FORMAT, INTO OUTFILE) is refused by the engine itself.
  const explained = await client.query({ query: `SELECT explain FROM (EXPLAIN AST ${text})`, format: 'JSONEachRow' });
  const lines = (await explained.json<{ explain: string }>()).map((r) => r.explain);
  checkConfinement(parseExplainAst(lines), { views: viewNames });
  return text;
}

/**
 * Step 3: the statement that runs. The database name is the configuration's plain identifier;
 * `tag` (a UUID of the service's) names the statement in the engine's process list, so it can
 * be stopped when its client goes away (session.ts, cancel).
 */
function confinedStatement(
  text: string,
  workspaceId: string,
  config: Config,
  format: SqlBody['format'],
  engineSettings: string,
  tag: string,
): string {
  const views = Object.entries(sqlViews)
    .map(([name, view]) => `${name} AS (SELECT * FROM ${config.CLICKHOUSE_DATABASE}.${view}(workspace = {workspace:String}))`)
    .join(', ');
  // Parquet compressed with Snappy, which every Parquet reader reads (the engine's default, ZSTD, is not).
  const output = format === 'parquet' ? ", output_format_parquet_compression_method = 'snappy'" : '';
  const settings = `${limitSettings(config)}${engineSettings}${output}, log_comment = ${quoteString(tag)}`;
  return `WITH ${bindParameters(views, { workspace: workspaceId })} SELECT * FROM (${text}) SETTINGS ${settings}`;
}

async function prepare(client: ClickHouseClient, session: SqlSession, workspaceId: string, body: SqlBody, config: Config, tag: string) {
  const text = await confinedText(client, body);
  return confinedStatement(text, workspaceId, config, body.format, session.engineSettings, tag);
}

/**
 * Runs `statement` with a tag of its own; when `signal` aborts (the client went away) while it
 * runs, the engine is told to stop it. A statement stopped so fails, and its error is the
 * caller's to drop: nobody is left to answer.
 */
async function cancellable<T>(session: SqlSession, signal: AbortSignal | undefined, statement: (tag: string) => Promise<T>): Promise<T> {
  const tag = `loupe-sql ${randomUUID()}`;
  const onAbort = () => void session.cancel(tag).catch(() => undefined);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal?.aborted) throw signal.reason;
    return await statement(tag);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * A server answers only once the query has finished, so a limit hit half-way is an error
 * response, not a cut-off body behind a 200 (the embedded connection ignores the setting: it
 * answers whole results anyway).
 */
const endOfQuery = { wait_end_of_query: 1 } as const;

interface JsonCompact {
  meta: Array<{ name: string; type: string }>;
  data: unknown[][];
  rows: number;
  statistics?: { elapsed?: number; rows_read?: number; bytes_read?: number };
}

export async function runSqlQuery(
  session: SqlSession,
  workspaceId: string,
  body: SqlBody,
  config: Config,
  signal?: AbortSignal,
): Promise<{ result: SqlResult; statistics: SqlStatistics }> {
  // Opening the session is the service's business: its failures are not the query's (no 400).
  const client = await session.client();
  try {
    const answer = await cancellable(session, signal, async (tag) => {
      const query = await prepare(client, session, workspaceId, body, config, tag);
      const resultSet = await client.query({ query, format: 'JSONCompact', clickhouse_settings: endOfQuery });
      return (await resultSet.json()) as unknown as JsonCompact;
    });
    return {
      result: { columns: answer.meta.map(({ name, type }) => ({ name, type })), rows: answer.data },
      statistics: {
        rowsRead: Number(answer.statistics?.rows_read ?? 0),
        bytesRead: Number(answer.statistics?.bytes_read ?? 0),
        elapsedMs: Number(answer.statistics?.elapsed ?? 0) * 1000,
      },
    };
  } catch (error) {
    throw toAppError(error, config);
  }
}

/** The same query answered as a file: CSV with a header line, JSON lines, or Parquet. */
export async function exportSqlQuery(
  session: SqlSession,
  workspaceId: string,
  body: SqlBody & { format: ExportFormat },
  config: Config,
  signal?: AbortSignal,
): Promise<{ file: Buffer; statistics: SqlStatistics }> {
  const client = await session.client();
  try {
    const started = performance.now();
    const { result, chunks } = await cancellable(session, signal, async (tag) => {
      const query = await prepare(client, session, workspaceId, body, config, tag);
      const result = await client.exec({
        query: `${query} FORMAT ${exportFormats[body.format]}`,
        clickhouse_settings: endOfQuery,
      });
      const chunks: Buffer[] = [];
      for await (const chunk of result.stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
      return { result, chunks };
    });
    const summary = (result as { summary?: { read_rows?: string; read_bytes?: string; elapsed_ns?: string } }).summary;
    return {
      file: Buffer.concat(chunks),
      statistics: {
        rowsRead: Number(summary?.read_rows ?? 0),
        bytesRead: Number(summary?.read_bytes ?? 0),
        elapsedMs: summary?.elapsed_ns ? Number(summary.elapsed_ns) / 1e6 : performance.now() - started,
      },
    };
  } catch (error) {
    throw toAppError(error, config);
  }
}
