import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { toStoredTime } from '../model/stored-time.js';
import { keyReadSettings, spanTextCondition } from './spans-table.js';
import { versionText } from './span-rows.js';
import { textSearchSchema } from '../model/search.js';
import type { PreviousSummary, TraceSummaryRow } from './summary-rows.js';
import { workspaceId } from './params.js';

/**
 * The SQL on `traces`, one summary row per trace and version (clickhouse/0001 and later): one
 * named query per read, its parameters and rows as zod schemas. Reads use FINAL (one live row
 * per trace) led by the workspace, the first column of the sorting key. The aggregates over
 * the summaries (stats, analytics, sessions and users) are in traces-table-aggregates.ts and
 * traces-table-groups.ts, the list's pages in traces-table-pages.ts; all filter traces with
 * `traceSummaryFilter`.
 */

/** Filters of trace summaries; every field optional. Times ISO 8601. */
export const traceFilterSchema = z.object({
  /** Inclusive lower bound of the trace's start time. */
  startFrom: z.string().optional(),
  /** Strict lower bound (a trace starting after this time). */
  startAfter: z.string().optional(),
  /** Strict upper bound (a trace starting before this time). */
  startBefore: z.string().optional(),
  sessionId: z.string().optional(),
  status: z.string().optional(),
  source: z.string().optional(),
  environment: z.string().optional(),
  service: z.string().optional(),
  userId: z.string().optional(),
  /** Every one of these tags is on the trace. */
  tags: z.array(z.string()).optional(),
  name: z.string().optional(),
  /** The trace's model (the one its list item shows). */
  model: z.string().optional(),
  minDurationMs: z.number().optional(),
  minCostUsd: z.number().optional(),
  /** A condition on `trace_id` with its own parameters (traces with a matching score: contract/trace-scores.ts). */
  scoreCondition: z.object({ sql: z.string(), values: z.record(z.string(), z.unknown()) }).optional(),
  /** Only these traces (the hits of a search, checked beforehand: search-pages.ts). */
  traceIds: z.array(z.string()).optional(),
  /** Traces with a live span holding the text (GET /api/traces?q=: search.ts, spans-table.ts `spanTextCondition`). */
  text: textSearchSchema.optional(),
});
export type TraceFilter = z.input<typeof traceFilterSchema>;

/**
 * The ids of the traces that have, or once had, the given user (`user_traces`, clickhouse/0011):
 * a set to narrow a read of `traces FINAL` by its key, never an answer on its own.
 */
export const userTraceCandidates = (user: string) =>
  `SELECT trace_id FROM user_traces WHERE workspace_id = {workspaceId:String} AND user_id = ${user}`;

/**
 * The one shared piece of SQL of the trace reads: the condition on the workspace's live
 * summaries that a filter names, and the values it binds (all parameters, nothing spliced).
 * Applied after FINAL, so a filter sees only each trace's newest row. A running trace has no
 * duration and a trace without usage no cost: neither passes a minimum.
 */
export function traceSummaryFilter(
  filter: TraceFilter,
  { candidates = true }: { candidates?: boolean } = {},
): { where: string; values: Record<string, unknown> } {
  const clauses = ['workspace_id = {workspaceId:String}', 'is_deleted = 0'];
  const values: Record<string, unknown> = {};
  const bind = (name: keyof TraceFilter, condition: string, value: unknown) => {
    clauses.push(condition);
    values[name] = value;
  };
  const time = "DateTime64(6, 'UTC')";
  if (filter.startFrom !== undefined) bind('startFrom', `start_time >= {startFrom:${time}}`, toStoredTime(filter.startFrom));
  if (filter.startAfter !== undefined) bind('startAfter', `start_time > {startAfter:${time}}`, toStoredTime(filter.startAfter));
  if (filter.startBefore !== undefined) bind('startBefore', `start_time < {startBefore:${time}}`, toStoredTime(filter.startBefore));
  const equal = [
    ['sessionId', 'session_id'],
    ['status', 'status'],
    ['source', 'source'],
    ['environment', 'environment'],
    ['userId', 'user_id'],
    ['name', 'name'],
    ['model', 'model'],
    ['service', 'service'],
  ] as const;
  for (const [name, column] of equal) {
    if (filter[name] !== undefined) bind(name, `${column} = {${name}:String}`, filter[name]);
  }
  // One user's traces lie in nearly every granule of `traces`: read only the summaries of its
  // candidate traces (a superset, clickhouse/0011), the filter above still deciding.
  // (Not for summaries laid over the store, which `user_traces` has not seen yet: `candidates`.)
  if (filter.userId !== undefined && candidates) clauses.push(`trace_id IN (${userTraceCandidates('{userId:String}')})`);
  if (filter.tags !== undefined && filter.tags.length > 0) bind('tags', 'hasAll(tags, {tags:Array(String)})', filter.tags);
  if (filter.minDurationMs !== undefined) bind('minDurationMs', 'duration_ms >= {minDurationMs:Float64}', filter.minDurationMs);
  if (filter.minCostUsd !== undefined) bind('minCostUsd', 'cost_usd >= {minCostUsd:Float64}', filter.minCostUsd);
  if (filter.scoreCondition !== undefined) {
    clauses.push(filter.scoreCondition.sql);
    Object.assign(values, filter.scoreCondition.values);
  }
  if (filter.traceIds !== undefined) bind('traceIds', 'trace_id IN {traceIds:Array(String)}', filter.traceIds);
  if (filter.text !== undefined) {
    const condition = spanTextCondition(filter.text);
    clauses.push(condition.sql);
    Object.assign(values, condition.values);
  }
  return { where: clauses.join(' AND '), values };
}

/**
 * The previous summaries of the traces a recompute touches (recompute.ts): the latest version of
 * each, deleted ones included (the caller drops them), with the trace fields a payload may leave
 * out and an earlier one sent.
 */
export const selectPreviousSummaries = defineQuery({
  name: 'selectPreviousSummaries',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: z.object({
    trace_id: z.string(),
    version: versionText,
    name: z.string(),
    session_id: z.string(),
    environment: z.string(),
    service: z.string(),
    user_id: z.string(),
    tags: z.array(z.string()),
    is_deleted: z.number(),
  }) satisfies z.ZodType<PreviousSummary & { is_deleted: number }>,
  sql: (values) => ({
    values,
    query: `
      SELECT trace_id, toString(version) AS version, name, session_id, environment, service, user_id, tags, is_deleted
      FROM traces
      WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)}
      ORDER BY version DESC
      LIMIT 1 BY trace_id
      ${keyReadSettings}`,
  }),
});

export async function insertTraceSummaries(clickhouse: ClickHouseClient, rows: TraceSummaryRow[]): Promise<void> {
  if (rows.length === 0) return;
  await clickhouse.insert({ table: 'traces', values: rows, format: 'JSONEachRow' });
}

/** Whether the trace has a live summary: a read of the key columns only. */
export const selectTraceExists = defineQuery({
  name: 'selectTraceExists',
  params: z.object({ workspaceId, traceId: z.string() }),
  row: z.object({ found: z.literal(1) }),
  sql: (values) => ({
    values,
    query: `
      SELECT 1 AS found FROM traces FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0
      ${keyReadSettings}`,
  }),
});

/**
 * One trace's list item with the details of all its live spans in start order, in one
 * statement: the embedded engine runs a session's statements one after another, so two reads
 * would cost two statements' fixed cost; here the spans ride along as an array (a scalar
 * subquery, also bounded by the primary key). Both reads take the key columns and one text
 * column each (clickhouse/0003).
 */
export const selectTraceWithSpans = defineQuery({
  name: 'selectTraceWithSpans',
  params: z.object({ workspaceId, traceId: z.string() }),
  row: z.object({ item: z.string(), spans: z.array(z.string()) }),
  sql: (values) => ({
    values,
    query: `
      SELECT item,
        (SELECT groupArray(detail) FROM (
           SELECT detail FROM spans FINAL
           WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0
           ORDER BY start_time, span_id)) AS spans
      FROM traces FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0
      ${keyReadSettings}`,
  }),
});

/**
 * The tombstone (is_deleted = 1, a newer version) of the trace's summary: its keys and start
 * time, and its session, the key of its copy in `session_traces` (clickhouse/0009), so the
 * materialized view hides that copy too.
 */
export async function tombstoneTraceSummary(
  clickhouse: ClickHouseClient,
  params: { workspaceId: string; traceId: string; version: string },
) {
  await clickhouse.command({
    query: `
      INSERT INTO traces (workspace_id, trace_id, session_id, start_time, span_count, error_count, version, is_deleted)
      SELECT workspace_id, trace_id, session_id, start_time, 0, 0, {version:UInt64}, 1 FROM traces FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0`,
    query_params: params,
  });
}

/** Per live trace of these ids, its cost, latency and failure (the figures of a dataset run's items). */
export const selectFiguresOfTraces = defineQuery({
  name: 'selectFiguresOfTraces',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: z.object({ trace_id: z.string(), cost_usd: z.number().nullable(), duration_ms: z.number().nullable(), failed: z.number() }),
  sql: (values) => ({
    values,
    query: `
      SELECT trace_id, cost_usd, duration_ms, toUInt8(status = 'error' OR error_count > 0) AS failed
      FROM traces FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)} AND is_deleted = 0`,
  }),
});
