import { z } from 'zod';
import { insertJsonLines, type ClickHouseClient } from '../../stores/clickhouse.js';
import { defineQuery } from '../../stores/clickhouse-query.js';

/**
 * The SQL on `scores` (clickhouse/0013): one row per score id and version, tombstones with
 * `is_deleted = 1` that keep the score's columns (so a candidate read by trace or name still
 * sees the tombstone that hides an older row).
 *
 * Every read sees each id's newest row only, tombstones dropped, its conditions applied to that
 * row, so an older row of a corrected score never matches. Two ways (`latestScores`):
 * - narrow (some ids, traces or sessions, or a few sessions' or users' traces): the rows that
 *   match, found through the skip indexes, each id's newest of them kept when it is the id's
 *   newest row of all (its maximum version, read from the id and version columns alone by the
 *   sorting key);
 * - wide (a name, a prompt's traces, the whole workspace): `FINAL`, which the sorting key
 *   `(workspace_id, id)` serves by merging the parts in order, the conditions applied after it.
 * (A score's rows lie by id, scattered over the table, so reading every candidate id's rows
 * whole and sorting them, as the first version did, took seconds at a million scores:
 * docs/decisions/100-scores.md.) A score's target is joined when read: a score may arrive before
 * its trace.
 */

export const scoreColumns =
  'id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id, span_id, session_id, ' +
  'author_id, config_id, eval_trace_id, toString(timestamp) AS timestamp_text, toString(created_at) AS created_at_text';

export const workspaceId = z.string().min(1);
/** An engine DateTime64(6) as text: 'YYYY-MM-DD hh:mm:ss.ffffff' (UTC). */
export const storedTime = z.string().regex(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);

export const scoreRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  data_type: z.enum(['numeric', 'categorical', 'boolean']),
  value: z.number(),
  string_value: z.string(),
  comment: z.string(),
  metadata: z.string(),
  source: z.string(),
  environment: z.string(),
  trace_id: z.string(),
  span_id: z.string(),
  session_id: z.string(),
  author_id: z.string(),
  config_id: z.string(),
  eval_trace_id: z.string(),
  /** Times as text under names of their own: an alias `timestamp` would shadow the column in WHERE and ORDER BY. */
  timestamp_text: storedTime,
  created_at_text: storedTime,
});
export type ScoreRow = z.infer<typeof scoreRowSchema>;
/** The columns a score often leaves empty: an insert may leave them out, and the engine stores ''. */
type EmptyByDefault =
  'string_value' | 'comment' | 'metadata' | 'environment' | 'trace_id' | 'span_id' | 'session_id' | 'config_id' | 'eval_trace_id';

/**
 * A row as a flush inserts it, one JSON line (JSONEachRow) each. A column left undefined is left
 * out of the line (JSON.stringify drops it) and the engine stores its default ('', `is_deleted`
 * 0): most of a score's twenty columns are empty (no comment, metadata, session, config, …), so
 * the engine and the write-ahead log take about a quarter fewer bytes per score. A row read
 * back from the log holds the same fields as its line.
 */
export type ScoreRowToInsert = Omit<ScoreRow, 'timestamp_text' | 'created_at_text' | EmptyByDefault> &
  Partial<Pick<ScoreRow, EmptyByDefault>> & {
    workspace_id: string;
    timestamp: string;
    created_at: string;
    version: string;
    is_deleted?: 1;
  };

/** Inserts score rows given as their JSON lines (JSONEachRow, one a line): a flush of the score writer (service/score-writes.ts). */
export async function insertScoreLines(clickhouse: ClickHouseClient, lines: Buffer): Promise<void> {
  await insertJsonLines(clickhouse, 'scores', lines);
}

/** Conditions on a score's newest row; those on ids, traces and sessions skip granules through the indexes. */
interface Candidates {
  traceIds?: string[];
  sessionIds?: string[];
  ids?: string[];
  /** The parameter holding the score name, when the candidates are of one name. */
  nameParam?: 'name' | 'scoreName';
  /** A subquery of trace ids (its parameters bound by the caller). */
  traceQuery?: string;
  /** The conditions above joined by OR (a score on one of these sessions or on one of these traces), not AND. */
  anyOf?: boolean;
  /** Many scores match (a prompt's traces): read the workspace's scores deduplicated whole. */
  wide?: boolean;
}

const latestColumns =
  'id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id, span_id, session_id, author_id, config_id, eval_trace_id, timestamp, created_at';

/**
 * The workspace's live scores, newest row per id, as a subquery with all of `scoreColumns`
 * (times as stored). Parameters: `workspaceId` and those the candidates name.
 */
export function latestScores(candidates: Candidates): string {
  const narrow: string[] = [];
  if (candidates.ids) narrow.push('id IN {ids:Array(String)}');
  if (candidates.traceIds) narrow.push('trace_id IN {traceIds:Array(String)}');
  if (candidates.sessionIds) narrow.push('session_id IN {sessionIds:Array(String)}');
  if (candidates.traceQuery !== undefined) narrow.push(`trace_id IN (${candidates.traceQuery})`);
  if (candidates.nameParam !== undefined) narrow.push(`name = {${candidates.nameParam}:String}`);
  const matching = narrow.length === 0 ? '1' : `(${narrow.join(candidates.anyOf ? ' OR ' : ' AND ')})`;
  if (candidates.wide || narrow.length === 0 || (candidates.nameParam !== undefined && narrow.length === 1)) {
    return `(SELECT ${latestColumns} FROM scores FINAL WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 AND ${matching})`;
  }
  return `(
    SELECT ${latestColumns} FROM (
      SELECT ${latestColumns}, version, is_deleted FROM scores
      WHERE workspace_id = {workspaceId:String} AND ${matching}
      ORDER BY version DESC LIMIT 1 BY id)
    WHERE is_deleted = 0 AND (id, version) IN (
      SELECT id, max(version) FROM scores
      WHERE workspace_id = {workspaceId:String}
        AND id IN (SELECT id FROM scores WHERE workspace_id = {workspaceId:String} AND ${matching})
      GROUP BY id)
  )`;
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
 * The traces of a session and of a user come from the trace summaries (`traces`, one live row per
 * trace after FINAL, bounded by the workspace); the spans of a prompt version from `spans`, deduplicated
 * by LIMIT 1 BY over a narrow column set as the prompt figures do. A span score counts for a prompt
 * version when its span used it, a trace score when its trace holds such a span.
 */
function scoreFilter(filter: ScoreFilter): { where: string; values: Record<string, unknown>; candidates: Candidates } {
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
  const sessionTraces = `SELECT trace_id FROM traces FINAL
    WHERE workspace_id = {workspaceId:String} AND session_id = {sessionId:String} AND is_deleted = 0`;
  const userTraces = `SELECT trace_id FROM traces FINAL WHERE workspace_id = {workspaceId:String} AND user_id = {userId:String} AND is_deleted = 0`;
  if (filter.sessionId !== undefined) bind('sessionId', `(session_id = {sessionId:String} OR trace_id IN (${sessionTraces}))`);
  if (filter.userId !== undefined) bind('userId', `trace_id IN (${userTraces})`);
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
  // The narrowest condition the skip indexes serve picks the candidates: a trace, a session's or a
  // user's traces (never every score of the workspace), else a name.
  let candidates: Candidates = {};
  if (filter.traceId !== undefined) {
    candidates = { traceIds: [filter.traceId] };
    values.traceIds = candidates.traceIds;
  } else if (filter.sessionId !== undefined) {
    candidates = { sessionIds: [filter.sessionId], traceQuery: sessionTraces, anyOf: true };
    values.sessionIds = candidates.sessionIds;
  } else if (filter.userId !== undefined) candidates = { traceQuery: userTraces };
  else if (filter.name !== undefined) candidates = { nameParam: 'name' };
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
      query: `SELECT ${scoreColumns} FROM ${latestScores(candidates)} WHERE ${where} ${cursor}
        ORDER BY timestamp DESC, id ASC LIMIT {fetch:UInt32}`,
    };
  },
});

export const averageRow = z.object({ key: z.string(), name: z.string(), n: z.coerce.number(), mean: z.number() });

/**
 * Per session and score name, over the scores on the session and on its traces (their traces
 * from the live trace summaries). A page of sessions reads wide: a page may hold a session of
 * thousands of traces, whose scores are cheaper deduplicated whole than matched by id
 * (bench/scores.ts: 0.8 s against 2.1 s at a million scores, on a busy host).
 */
export const selectAveragesOfSessions = defineQuery({
  name: 'selectAveragesOfSessions',
  params: z.object({ workspaceId, sessionIds: z.array(z.string()).min(1) }),
  row: averageRow,
  sql: (values) => ({
    values,
    query: `
      WITH session_of AS (
        SELECT trace_id, session_id FROM traces FINAL
        WHERE workspace_id = {workspaceId:String} AND session_id IN {sessionIds:Array(String)} AND is_deleted = 0)
      SELECT if(s.session_id != '', s.session_id, t.session_id) AS key, s.name AS name, count() AS n, avg(s.value) AS mean
      FROM ${latestScores({ sessionIds: values.sessionIds, traceQuery: 'SELECT trace_id FROM session_of', anyOf: true, wide: values.sessionIds.length > 1 })} AS s
      LEFT JOIN session_of AS t ON s.trace_id = t.trace_id AND s.trace_id != ''
      WHERE key IN {sessionIds:Array(String)}
      GROUP BY key, name ORDER BY key, name`,
  }),
});

/** Tombstones for the live scores matching the candidates (a trace's, or some ids), as one version. */
async function tombstone(clickhouse: ClickHouseClient, candidates: Candidates, values: Record<string, unknown>) {
  await clickhouse.command({
    query: `
      INSERT INTO scores (workspace_id, id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id,
        span_id, session_id, author_id, config_id, eval_trace_id, timestamp, created_at, version, is_deleted)
      SELECT {workspaceId:String}, id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id,
        span_id, session_id, author_id, config_id, eval_trace_id, timestamp, created_at, {version:UInt64}, 1
      FROM ${latestScores(candidates)}`,
    query_params: values,
  });
}

export async function tombstoneScoresOfTrace(
  clickhouse: ClickHouseClient,
  params: { workspaceId: string; traceId: string; version: string },
) {
  await tombstone(clickhouse, { traceIds: [params.traceId] }, { ...params, traceIds: [params.traceId] });
}

export async function tombstoneScore(clickhouse: ClickHouseClient, params: { workspaceId: string; id: string; version: string }) {
  await tombstone(clickhouse, { ids: [params.id] }, { ...params, ids: [params.id] });
}
