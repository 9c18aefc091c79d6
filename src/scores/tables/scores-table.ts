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

const workspaceId = z.string().min(1);
/** An engine DateTime64(6) as text: 'YYYY-MM-DD hh:mm:ss.ffffff' (UTC). */
const storedTime = z.string().regex(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);

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
export type ScoreRowToInsert = Omit<ScoreRow, 'timestamp_text' | 'created_at_text'> & {
  workspace_id: string;
  timestamp: string;
  created_at: string;
  version: string;
  is_deleted: 0 | 1;
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

/** The live scores on the trace and its spans, oldest first. */
export const selectScoresOfTrace = defineQuery({
  name: 'selectScoresOfTrace',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: scoreRowSchema,
  sql: (values) => ({
    values,
    query: `SELECT ${scoreColumns} FROM ${latestScores({ traceIds: values.traceIds })}
      WHERE trace_id IN {traceIds:Array(String)} ORDER BY timestamp, id`,
  }),
});

const averageRow = z.object({ key: z.string(), name: z.string(), n: z.coerce.number(), mean: z.number() });

/** Per trace and score name, the count and mean of the live scores on the trace or its spans. */
export const selectAveragesOfTraces = defineQuery({
  name: 'selectAveragesOfTraces',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: averageRow,
  sql: (values) => ({
    values,
    query: `SELECT trace_id AS key, name, count() AS n, avg(value) AS mean FROM ${latestScores({ traceIds: values.traceIds })}
      WHERE trace_id IN {traceIds:Array(String)} GROUP BY key, name ORDER BY key, name`,
  }),
});

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

/** Per user and score name, over the scores on the user's traces. */
export const selectAveragesOfUsers = defineQuery({
  name: 'selectAveragesOfUsers',
  params: z.object({ workspaceId, userIds: z.array(z.string()).min(1) }),
  row: averageRow,
  sql: (values) => ({
    values,
    query: `
      WITH user_of AS (
        SELECT trace_id, user_id FROM traces FINAL
        WHERE workspace_id = {workspaceId:String} AND user_id IN {userIds:Array(String)} AND is_deleted = 0)
      SELECT u.user_id AS key, s.name AS name, count() AS n, avg(s.value) AS mean
      FROM ${latestScores({ traceQuery: 'SELECT trace_id FROM user_of' })} AS s INNER JOIN user_of AS u ON s.trace_id = u.trace_id
      GROUP BY key, name ORDER BY key, name`,
  }),
});

/**
 * Per group and score name, over the live scores on the groups' traces and their spans: `groups`
 * a subquery of `(key, trace_id)` rows from the trace stats (TraceScores.averagesOfGroups), the
 * scores read through the trace ids it names.
 */
export const selectAveragesOfGroups = defineQuery({
  name: 'selectAveragesOfGroups',
  params: z.object({ workspaceId, groups: z.object({ sql: z.string(), values: z.record(z.string(), z.unknown()) }) }),
  row: averageRow,
  sql: ({ workspaceId, groups }) => ({
    values: { ...groups.values, workspaceId },
    query: `
      WITH stat_groups AS (${groups.sql})
      SELECT g.key AS key, s.name AS name, count() AS n, avg(s.value) AS mean
      FROM ${latestScores({ traceQuery: 'SELECT trace_id FROM stat_groups', wide: true })} AS s
      INNER JOIN stat_groups AS g ON s.trace_id = g.trace_id
      GROUP BY key, name ORDER BY key, name`,
  }),
});

/** The traces with live scores, once per score name (TraceScores.traceNames). */
export const traceScoreNames = () => ({
  sql: `SELECT DISTINCT trace_id, name AS key FROM ${latestScores({})} WHERE trace_id != ''`,
  values: {},
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

/**
 * The condition on a column `trace_id` of the caller's statement: traces with a live score of
 * the name in the range or of the category (TraceScores.traceCondition). Parameters prefixed `score`.
 */
export function traceScoreCondition(condition: {
  name: string;
  min?: number | undefined;
  max?: number | undefined;
  value?: string | undefined;
}) {
  const clauses = ['name = {scoreName:String}', "trace_id != ''"];
  const values: Record<string, unknown> = { scoreName: condition.name };
  if (condition.min !== undefined) {
    clauses.push('value >= {scoreMin:Float64}');
    values.scoreMin = condition.min;
  }
  if (condition.max !== undefined) {
    clauses.push('value <= {scoreMax:Float64}');
    values.scoreMax = condition.max;
  }
  if (condition.value !== undefined) {
    clauses.push('string_value = {scoreValue:String}');
    values.scoreValue = condition.value;
  }
  return { sql: `trace_id IN (SELECT trace_id FROM ${latestScores({ nameParam: 'scoreName' })} WHERE ${clauses.join(' AND ')})`, values };
}

/** The widest window DateTime64(6) holds, for a window that names no bound. */
const earliest = '1900-01-01 00:00:00.000000';
const latest = '2299-12-31 23:59:59.999999';

/**
 * The spans of one prompt (and version, when named) starting strictly inside the window, with
 * their trace: each span's newest row (LIMIT 1 BY over a narrow column set, as the prompt
 * figures read them); tombstones are read beside the named rows so a deleted span drops out.
 */
const promptSpans = (withVersion: boolean) => `
  SELECT trace_id, span_id, prompt_version FROM (
    SELECT trace_id, span_id, prompt_name, prompt_version, start_time, is_deleted FROM spans
    WHERE workspace_id = {workspaceId:String} AND (prompt_name = {promptName:String} OR is_deleted = 1)
    ORDER BY version DESC LIMIT 1 BY trace_id, span_id)
  WHERE is_deleted = 0 AND prompt_name = {promptName:String} ${withVersion ? 'AND prompt_version = {promptVersion:String}' : ''}
    AND start_time > {startAfter:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')}`;

const versionFigureRow = z.object({
  version: z.string(),
  name: z.string(),
  data_type: z.enum(['numeric', 'categorical', 'boolean']),
  category: z.string(),
  n: z.coerce.number(),
  mean: z.number(),
  /** Sample variance; null with one score. */
  variance: z.number().nullable(),
});

/**
 * Per version, score name, type and category (categorical only), the count, mean and sample
 * variance of the live scores on the prompt's spans or on their traces. A trace score counts once
 * per version however many of the version's spans its trace holds.
 */
export const selectPromptScoreFigures = defineQuery({
  name: 'selectPromptScoreFigures',
  params: z.object({
    workspaceId,
    promptName: z.string(),
    promptVersion: z.string().optional(),
    startAfter: storedTime.optional(),
    startBefore: storedTime.optional(),
  }),
  row: versionFigureRow,
  sql: ({ workspaceId, promptName, promptVersion, startAfter, startBefore }) => {
    const spansOf = promptSpans(promptVersion !== undefined);
    return {
      values: { workspaceId, promptName, promptVersion, startAfter: startAfter ?? earliest, startBefore: startBefore ?? latest },
      query: `
        WITH prompt_spans AS (${spansOf})
        SELECT v.prompt_version AS version, s.name AS name, s.data_type AS data_type,
          if(s.data_type = 'categorical', s.string_value, '') AS category,
          count() AS n, avg(s.value) AS mean, if(n > 1, varSamp(s.value), NULL) AS variance
        FROM ${latestScores({ traceQuery: 'SELECT trace_id FROM prompt_spans', wide: true })} AS s
        INNER JOIN (SELECT DISTINCT trace_id, arrayJoin(['', span_id]) AS span_id, prompt_version FROM prompt_spans) AS v
          ON s.trace_id = v.trace_id AND s.span_id = v.span_id
        GROUP BY version, name, data_type, category
        ORDER BY version, name, category`,
    };
  },
});

const nameFigureRow = z.object({
  name: z.string(),
  data_type: z.enum(['numeric', 'categorical', 'boolean']),
  label: z.string(),
  n: z.coerce.number(),
  mean: z.number(),
  p50: z.number().nullable(),
});

/**
 * Per score name (and label, for categorical and boolean scores) of the live scores given in the
 * window: the count, the mean and the exact median (numeric).
 */
export const selectScoreNameFigures = defineQuery({
  name: 'selectScoreNameFigures',
  params: z.object({ workspaceId, from: storedTime, to: storedTime, name: z.string().optional() }),
  row: nameFigureRow,
  sql: ({ workspaceId, from, to, name }) => ({
    values: { workspaceId, from, to, name },
    query: `
      SELECT name, data_type, if(data_type = 'numeric', '', string_value) AS label, count() AS n, avg(value) AS mean,
        if(data_type = 'numeric', quantileExactInclusive(0.5)(value), NULL) AS p50
      FROM ${latestScores(name === undefined ? {} : { nameParam: 'name' })}
      WHERE timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')} ${name === undefined ? '' : 'AND name = {name:String}'}
      GROUP BY name, data_type, label ORDER BY name, label`,
  }),
});

/** Per score name and hour or day (UTC; the bucket's start as ISO 8601) of the window: the count and mean of the live scores given then. */
export const selectScoresOverTime = defineQuery({
  name: 'selectScoresOverTime',
  params: z.object({ workspaceId, from: storedTime, to: storedTime, name: z.string().optional(), interval: z.enum(['hour', 'day']) }),
  row: z.object({ name: z.string(), bucket: z.string(), n: z.coerce.number(), mean: z.number() }),
  sql: ({ workspaceId, from, to, name, interval }) => ({
    values: { workspaceId, from, to, name },
    query: `
      SELECT name, formatDateTime(${interval === 'hour' ? 'toStartOfHour' : 'toStartOfDay'}(timestamp), '%Y-%m-%dT%H:%i:%S.000Z', 'UTC') AS bucket, count() AS n, avg(value) AS mean
      FROM ${latestScores(name === undefined ? {} : { nameParam: 'name' })}
      WHERE timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')} ${name === undefined ? '' : 'AND name = {name:String}'}
      GROUP BY name, bucket ORDER BY name, bucket`,
  }),
});

/** Per trace and score name, the data type, count and mean of the live scores on the trace or its spans (run items' scores). */
export const selectScoreValuesOfTraces = defineQuery({
  name: 'selectScoreValuesOfTraces',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: z.object({
    trace_id: z.string(),
    name: z.string(),
    data_type: z.enum(['numeric', 'categorical', 'boolean']),
    n: z.coerce.number(),
    mean: z.number(),
    /** The scores' string values (categories, `true`/`false`, '' for numeric): the alias `data_type` is the aggregate here. */
    labels: z.array(z.string()),
  }),
  sql: (values) => ({
    values,
    query: `SELECT trace_id, name, any(data_type) AS data_type, count() AS n, avg(value) AS mean,
        groupArray(string_value) AS labels
      FROM ${latestScores({ traceIds: values.traceIds })}
      WHERE trace_id IN {traceIds:Array(String)} GROUP BY trace_id, name ORDER BY trace_id, name`,
  }),
});
