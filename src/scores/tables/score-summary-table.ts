import { z } from 'zod';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { averageRow, storedTime, workspaceId } from './score-params.js';

/**
 * The SQL on `score_summary` (clickhouse/0020): every row of `scores` copied by a materialized
 * view, sorted by (workspace, name, trace, score id), with the columns the reads below need;
 * tombstones hide a deleted score's row and the row a correction moved away from (a re-sent id
 * under another name or trace). Read with FINAL, tombstones dropped, conditions applied after
 * it: one live row per score, as `scores` gives, so every figure stays exact.
 *
 * It serves the reads by name (the trace list's score filter, a name's figures) and the wide reads
 * over many traces (averages per stats group, the traces per name): a name is a range of the key,
 * and the wide reads scan these narrow rows instead of deduplicating `scores` whole. The reads of
 * some traces' or sessions' scores go to `score_targets` (score-targets-table.ts), sorted by
 * trace; the prompt comparison reads `prompt_version_scores` (prompt-version-scores-table.ts),
 * kept from this table's rows.
 */

/** The workspace's live summary rows matching `where` (times as stored). Parameters: `workspaceId` and those `where` names. */
const liveScores = (where: string) => `(
  SELECT name, trace_id, id, span_id, session_id, data_type, value, string_value, comment, source, author_id, timestamp
  FROM score_summary FINAL
  WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 AND ${where})`;

const dataType = z.enum(['numeric', 'categorical', 'boolean']);

/**
 * Per group and score name, over the live scores on the groups' traces and their spans: `groups`
 * a subquery of `(key, trace_id)` rows from the trace stats (TraceScores.averagesOfGroups).
 * Summed per trace first, so the join with the groups is one row per trace and name.
 */
export const selectAveragesOfGroups = defineQuery({
  name: 'selectAveragesOfGroups',
  params: z.object({ workspaceId, groups: z.object({ sql: z.string(), values: z.record(z.string(), z.unknown()) }) }),
  row: averageRow,
  sql: ({ workspaceId, groups }) => ({
    values: { ...groups.values, workspaceId },
    query: `
      SELECT g.key AS key, s.name AS name, sum(s.n) AS n, sum(s.total) / sum(s.n) AS mean
      FROM (${groups.sql}) AS g
      INNER JOIN (
        SELECT trace_id, name, count() AS n, sum(value) AS total
        FROM ${liveScores("trace_id != ''")}
        GROUP BY trace_id, name) AS s ON s.trace_id = g.trace_id
      GROUP BY key, name ORDER BY key, name`,
  }),
});

/** The traces with live scores, once per score name (TraceScores.traceNames). */
export const traceScoreNames = () => ({
  sql: `SELECT DISTINCT trace_id, name AS key FROM ${liveScores("trace_id != ''")}`,
  values: {},
});

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
  return { sql: `trace_id IN (SELECT trace_id FROM ${liveScores(clauses.join(' AND '))})`, values };
}

const nameFigureRow = z.object({
  name: z.string(),
  data_type: dataType,
  label: z.string(),
  n: z.coerce.number(),
  mean: z.number(),
  p50: z.number().nullable(),
});

const inWindow = (name: string | undefined) =>
  "timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}" +
  (name === undefined ? '' : ' AND name = {name:String}');

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
      FROM ${liveScores(inWindow(name))}
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
      FROM ${liveScores(inWindow(name))}
      GROUP BY name, bucket ORDER BY name, bucket`,
  }),
});
