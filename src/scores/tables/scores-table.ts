import { z } from 'zod';
import { insertJsonLines, type ClickHouseClient } from '../../stores/clickhouse.js';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { scoreRowSchema, storedTime, workspaceId, type ScoreRow } from './score-params.js';
import { scoresOnSessions, scoresOnTraces, sessionsTraces, usersTraces } from './score-targets-table.js';

/**
 * The SQL on `scores` (clickhouse/0013): one row per score id and version, tombstones with
 * `is_deleted = 1` that keep the score's columns (so a candidate read by trace or name still
 * sees the tombstone that hides an older row).
 *
 * Every read sees each id's newest row only, tombstones dropped, its conditions applied to that
 * row, so an older row of a corrected score never matches (`latestScores`): some ids by the
 * sorting key `(workspace_id, id)`, every row of those ids read and the newest kept; otherwise
 * `FINAL`, the conditions applied after it (a name's candidates through its skip index, exact
 * under FINAL with `use_skip_indexes_if_final_exact_mode`). The scores of some traces, sessions
 * or users are read from `score_targets` (score-targets-table.ts), sorted by trace. A score's
 * target is joined when read: a score may arrive before its trace. */

export const scoreColumns =
  'id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id, span_id, session_id, ' +
  'author_id, config_id, eval_trace_id, toString(timestamp) AS timestamp_text, toString(created_at) AS created_at_text';

/** The columns a score often leaves empty: an insert may leave them out, and the engine stores ''. */
type EmptyByDefault =
  'string_value' | 'comment' | 'metadata' | 'environment' | 'trace_id' | 'span_id' | 'session_id' | 'config_id' | 'eval_trace_id';

/**
 * A row as ingest makes it. A column left undefined is empty: its line (`scoreLineOf`) holds ''
 * (`is_deleted` 0), the engine's default. Most of a score's twenty columns are empty (no
 * comment, metadata, session, config, …).
 */
export type ScoreRowToInsert = Omit<ScoreRow, 'timestamp_text' | 'created_at_text' | EmptyByDefault> &
  Partial<Pick<ScoreRow, EmptyByDefault>> & {
    workspace_id: string;
    timestamp: string;
    created_at: string;
    version: string;
    is_deleted?: 1;
    /** The service generated the id as it took the score, and is the store's only writer: no earlier row of it exists (clickhouse/0026). */
    fresh_id?: 1;
  };

/**
 * The columns of a score row's line, in the order of its values: a flush inserts its rows as
 * arrays of them (JSONCompactEachRow), and the write-ahead log holds the same arrays. The engine
 * then matches no key names, and a line is about a third shorter than the row as an object
 * (docs/decisions/118-score-inserts-cheaper-for-the-engine.md).
 */
export const scoreLineColumns = [
  'workspace_id',
  'id',
  'name',
  'data_type',
  'value',
  'string_value',
  'comment',
  'metadata',
  'source',
  'environment',
  'trace_id',
  'span_id',
  'session_id',
  'author_id',
  'config_id',
  'eval_trace_id',
  'timestamp',
  'created_at',
  'version',
  'is_deleted',
  'fresh_id',
] as const;

/** A score row's line as values, in `scoreLineColumns` order ('' for an empty text column, 0 for a live row). */
export type ScoreLineValues = [
  workspace_id: string,
  id: string,
  name: string,
  data_type: ScoreRowToInsert['data_type'],
  value: number,
  string_value: string,
  comment: string,
  metadata: string,
  source: ScoreRowToInsert['source'],
  environment: string,
  trace_id: string,
  span_id: string,
  session_id: string,
  author_id: string,
  config_id: string,
  eval_trace_id: string,
  timestamp: string,
  created_at: string,
  version: string,
  is_deleted: 0 | 1,
  fresh_id: 0 | 1,
];

/**
 * A row as the score log gives it back: its values (lines logged since decision 118) or an
 * object (lines logged before, JSONEachRow). Both are applied again after a restart.
 */
export type LoggedScoreRow = ScoreRowToInsert | ScoreLineValues;

/** A row's line: its values in `scoreLineColumns` order, as JSON. */
export function scoreLineOf(row: ScoreRowToInsert): string {
  const values: ScoreLineValues = [
    row.workspace_id,
    row.id,
    row.name,
    row.data_type,
    row.value,
    row.string_value ?? '',
    row.comment ?? '',
    row.metadata ?? '',
    row.source,
    row.environment ?? '',
    row.trace_id ?? '',
    row.span_id ?? '',
    row.session_id ?? '',
    row.author_id,
    row.config_id ?? '',
    row.eval_trace_id ?? '',
    row.timestamp,
    row.created_at,
    row.version,
    row.is_deleted ?? 0,
    row.fresh_id ?? 0,
  ];
  return JSON.stringify(values);
}

/** A logged row as a row: values back to their columns (an object as it is), `is_deleted` and `fresh_id` only when 1. */
export function scoreRowOf(logged: LoggedScoreRow): ScoreRowToInsert {
  if (!Array.isArray(logged)) return logged;
  const row: Record<string, unknown> = Object.fromEntries(scoreLineColumns.map((column, i) => [column, logged[i]]));
  if (row.is_deleted !== 1) delete row.is_deleted;
  if (row.fresh_id !== 1) delete row.fresh_id;
  return row as ScoreRowToInsert;
}

/** Inserts score rows given as their lines (`scoreLineOf`, one a line): a flush of the score writer (service/score-writes.ts). */
export async function insertScoreLines(clickhouse: ClickHouseClient, lines: Buffer): Promise<void> {
  await insertJsonLines(clickhouse, 'scores', lines, scoreLineColumns);
}

/** Which scores a read of `scores` starts from: some ids (through the key), or those of the filter's name (its skip index). */
interface Candidates {
  ids?: string[];
  /** The scores of the name in the parameter `name`. */
  byName?: boolean;
}

const latestColumns =
  'id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id, span_id, session_id, author_id, config_id, eval_trace_id, timestamp, created_at';

/**
 * The workspace's live scores, newest row per id, as a subquery with all of `scoreColumns`
 * (times as stored). Parameters: `workspaceId` and those the candidates name.
 */
export function latestScores(candidates: Candidates): string {
  if (!candidates.ids) {
    const name = candidates.byName ? 'AND name = {name:String}' : '';
    return `(SELECT ${latestColumns} FROM scores FINAL WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 ${name})`;
  }
  return `(
    SELECT ${latestColumns} FROM (
      SELECT ${latestColumns}, version, is_deleted FROM scores
      WHERE workspace_id = {workspaceId:String} AND id IN {ids:Array(String)}
      ORDER BY version DESC LIMIT 1 BY id)
    WHERE is_deleted = 0)`;
}

/** The live scores of these ids (at most a request's worth). */
export const selectScoresByIds = defineQuery({
  name: 'selectScoresByIds',
  params: z.object({ workspaceId, ids: z.array(z.string()).min(1) }),
  row: scoreRowSchema,
  sql: (values) => ({ values, query: `SELECT ${scoreColumns} FROM ${latestScores({ ids: values.ids })}` }),
});

/** The list's filter, every field optional; applied after deduplication. */
export const scoreFilterSchema = z.object({
  name: z.string().optional(),
  source: z.string().optional(),
  dataType: z.string().optional(),
  traceId: z.string().optional(),
  spanId: z.string().optional(),
  sessionId: z.string().optional(),
  userId: z.string().optional(),
  authorId: z.string().optional(),
  minValue: z.number().optional(),
  maxValue: z.number().optional(),
  stringValue: z.string().optional(),
  /** Stored times ('YYYY-MM-DD hh:mm:ss.ffffff'). */
  from: z.string().optional(),
  to: z.string().optional(),
  promptName: z.string().optional(),
  promptVersion: z.string().optional(),
});
export type ScoreFilter = z.infer<typeof scoreFilterSchema>;

/**
 * The traces of a session and of a user come from the tables sorted by them (`sessionsTraces`,
 * `usersTraces` in score-targets-table.ts); the spans of a prompt version from `spans`, deduplicated
 * by LIMIT 1 BY over a narrow column set as the prompt figures do. A span score counts for a prompt
 * version when its span used it, a trace score when its trace holds such a span.
 */
function scoreFilter(filter: ScoreFilter): { where: string; values: Record<string, unknown>; candidates: string } {
  const clauses: string[] = [];
  const values: Record<string, unknown> = {};
  const bind = (name: keyof ScoreFilter, clause: string) => {
    clauses.push(clause);
    values[name] = filter[name];
  };
  const equal = [
    ['name', 'name'],
    ['source', 'source'],
    ['dataType', 'data_type'],
    ['traceId', 'trace_id'],
    ['spanId', 'span_id'],
    ['authorId', 'author_id'],
    ['stringValue', 'string_value'],
  ] as const;
  for (const [name, column] of equal) if (filter[name] !== undefined) bind(name, `${column} = {${name}:String}`);
  if (filter.minValue !== undefined) bind('minValue', 'value >= {minValue:Float64}');
  if (filter.maxValue !== undefined) bind('maxValue', 'value <= {maxValue:Float64}');
  if (filter.from !== undefined) bind('from', "timestamp >= {from:DateTime64(6, 'UTC')}");
  if (filter.to !== undefined) bind('to', "timestamp < {to:DateTime64(6, 'UTC')}");
  const sessionTraces = `SELECT trace_id FROM (${sessionsTraces('[{sessionId:String}]')})`;
  const userTraces = `SELECT trace_id FROM (${usersTraces('[{userId:String}]')})`;
  // The session's and the user's conditions, unless the candidates below are theirs already.
  if (filter.sessionId !== undefined && filter.traceId !== undefined)
    bind('sessionId', `(session_id = {sessionId:String} OR trace_id IN (${sessionTraces}))`);
  if (filter.userId !== undefined && (filter.traceId !== undefined || filter.sessionId !== undefined))
    bind('userId', `trace_id IN (${userTraces})`);
  if (filter.promptName !== undefined) {
    values.promptName = filter.promptName;
    const version = filter.promptVersion !== undefined ? 'AND prompt_version = {promptVersion:String}' : '';
    if (filter.promptVersion !== undefined) values.promptVersion = filter.promptVersion;
    clauses.push(`(trace_id, span_id) IN (
      SELECT trace_id, arrayJoin(['', span_id]) FROM (
        SELECT trace_id, span_id, prompt_name, prompt_version, is_deleted FROM spans
        WHERE workspace_id = {workspaceId:String} AND (prompt_name = {promptName:String} OR is_deleted = 1)
        ORDER BY version DESC LIMIT 1 BY trace_id, span_id)
      WHERE is_deleted = 0 AND prompt_name = {promptName:String} ${version})`);
  }
  // The scores of a trace, of a session (and its traces) or of a user's traces are read by their
  // traces from `score_targets` (sorted by trace: never every score of the workspace); others from
  // `scores`, a name's candidates through its skip index.
  let candidates: string;
  if (filter.traceId !== undefined) {
    candidates = scoresOnTraces('{traceIds:Array(String)}');
    values.traceIds = [filter.traceId];
  } else if (filter.sessionId !== undefined) {
    candidates = scoresOnSessions(sessionTraces);
    values.sessionId = filter.sessionId;
    values.sessionIds = [filter.sessionId];
  } else if (filter.userId !== undefined) {
    candidates = scoresOnTraces(`(${userTraces})`);
    values.userId = filter.userId;
  } else candidates = latestScores({ byName: filter.name !== undefined });
  return { where: clauses.length ? clauses.join(' AND ') : '1', values, candidates };
}

/**
 * A page of the filter's scores, newest first (ties by id), strictly after a row when a cursor
 * names one (its stored time and id); one row past the page tells whether more follow.
 */
export const selectScorePage = defineQuery({
  name: 'selectScorePage',
  params: z.object({
    workspaceId,
    filter: scoreFilterSchema,
    after: z.object({ timestamp: storedTime, id: z.string() }).optional(),
    fetch: z.number().int().min(1),
  }),
  row: scoreRowSchema,
  sql: ({ workspaceId, filter, after, fetch }) => {
    const { where, values, candidates } = scoreFilter(filter);
    const cursor = after
      ? "AND (timestamp < {afterTime:DateTime64(6, 'UTC')} OR (timestamp = {afterTime:DateTime64(6, 'UTC')} AND id > {afterId:String}))"
      : '';
    return {
      values: { ...values, workspaceId, fetch, ...(after && { afterTime: after.timestamp, afterId: after.id }) },
      query: `SELECT ${scoreColumns} FROM ${candidates} WHERE ${where} ${cursor}
        ORDER BY timestamp DESC, id ASC LIMIT {fetch:UInt32}`,
    };
  },
});

/** Tombstones (one version) of the live scores `live` gives: a subquery with the columns of `scores`. */
async function tombstone(clickhouse: ClickHouseClient, live: string, values: Record<string, unknown>) {
  await clickhouse.command({
    query: `
      INSERT INTO scores (workspace_id, id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id,
        span_id, session_id, author_id, config_id, eval_trace_id, timestamp, created_at, version, is_deleted)
      SELECT {workspaceId:String}, id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id,
        span_id, session_id, author_id, config_id, eval_trace_id, timestamp, created_at, {version:UInt64}, 1
      FROM ${live}`,
    query_params: values,
  });
}

/** Tombstones of the trace's live scores (on it and its spans), read by the trace from `score_targets`. */
export async function tombstoneScoresOfTrace(
  clickhouse: ClickHouseClient,
  params: { workspaceId: string; traceId: string; version: string },
) {
  await tombstone(clickhouse, scoresOnTraces('{traceIds:Array(String)}'), { ...params, traceIds: [params.traceId] });
}

export async function tombstoneScore(clickhouse: ClickHouseClient, params: { workspaceId: string; id: string; version: string }) {
  await tombstone(clickhouse, latestScores({ ids: [params.id] }), { ...params, ids: [params.id] });
}
