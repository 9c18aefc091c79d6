import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { toStoredTime } from '../model/stored-time.js';
import { afterValues } from '../model/cursor.js';
import type { TraceSort } from '../model/schemas.js';
import { textSearchSchema } from '../model/search.js';
import { keyReadSettings, spanTextCondition, versionText } from './spans-table.js';
import { workspaceId } from './params.js';

/**
 * The SQL on `traces`, one summary row per trace and version (clickhouse/0001 and later), and
 * its row shapes: one named query per read, its parameters and rows as zod schemas, every value
 * a parameter. Reads use FINAL (one live row per trace) led by the workspace, the first column of
 * the sorting key, and filter traces with `traceSummaryFilter`. In order: the rows, the filter,
 * the writes and key reads of the summary recompute and of one trace, the list's pages, the
 * sessions' and users' groups, the stats' and analytics' aggregates, and what changed (the
 * evaluators' scan).
 */

// The rows.

/**
 * The rows the summary recompute reads and writes (summary.ts), beside a live span's narrow
 * columns (spans-table.ts, SpanFacts): the previous summary's trace fields, and the summary row of `traces` (clickhouse/0001 and the
 * later migrations that add its columns).
 */

/** The trace-level fields of the newest previous summary row, which payloads may have left out since. */
export interface PreviousSummary {
  trace_id: string;
  version: string;
  name: string;
  session_id: string;
  environment: string;
  service: string;
  user_id: string;
  tags: string[];
}

export interface SpanGroup {
  key: string;
  spans: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  durations: number[];
}

export interface TraceSummaryRow {
  workspace_id: string;
  trace_id: string;
  name: string;
  session_id: string;
  source: string;
  environment: string;
  service: string;
  user_id: string;
  tags: string[];
  status: string;
  trace_kind: string;
  start_time: string;
  end_time: string | null;
  duration_ms: number | null;
  model: string;
  provider: string;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  /** Parts of cost_usd by source (clickhouse/0006): sent by clients (also '' on older rows), computed from prices. */
  cost_provided: number;
  cost_computed: number;
  /** Counted generation spans that found no price. */
  unpriced_spans: number;
  span_count: number;
  error_count: number;
  item: string;
  by_model: SpanGroup[];
  by_provider: SpanGroup[];
  by_kind: SpanGroup[];
  /** Time to first token of each span that has one, with its keys (clickhouse/0005): stats and analytics TTFT. */
  ttfts: { model: string; provider: string; kind: string; ttft_ms: number }[];
  version: string;
  is_deleted: 0;
}

// The filter, the recompute's statements and one trace.

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

// The list's pages.

/**
 * The list's pages of `traces` (GET /api/traces, list.ts): its orders, a page in one of them
 * and the count of a filter, over the stored summaries alone or with the summaries of
 * unapplied writes laid over them (the overlay, pending-summaries.ts).
 */

const timeType = "DateTime64(6, 'UTC')";
/** A list order: the ordering expression (NULLs, running traces or traces without usage, last either way), its type, its direction. */
export const traceSorts: Record<TraceSort, { key: string; type: string; desc: boolean }> = {
  '-startTime': { key: 'start_time', type: timeType, desc: true },
  startTime: { key: 'start_time', type: timeType, desc: false },
  '-durationMs': { key: 'ifNull(duration_ms, -1e308)', type: 'Float64', desc: true },
  durationMs: { key: 'ifNull(duration_ms, 1e308)', type: 'Float64', desc: false },
  '-costUsd': { key: 'ifNull(cost_usd, -1e308)', type: 'Float64', desc: true },
  costUsd: { key: 'ifNull(cost_usd, 1e308)', type: 'Float64', desc: false },
};

const sortSchema = z.enum(Object.keys(traceSorts) as [TraceSort, ...TraceSort[]]);

/**
 * Summaries computed over answered writes not yet applied (pending-summaries.ts), laid over the
 * stored ones by a list: the stored rows of `ids` are left out and `rows` read instead, with
 * the same filter, order and cursor. `rows` are JSONEachRow text of the columns a list filters
 * and sorts on (`overlayOf`), bound as a parameter and read by the `format` table function; a
 * page's rows from it come with an empty `item`, which the caller takes from `items` (most of a
 * row's bytes, which the engine would otherwise parse for every pending trace).
 */
const overlaySchema = z.object({ ids: z.array(z.string()).min(1), rows: z.string() });
export type TraceOverlay = z.infer<typeof overlaySchema>;
const overlayColumns = [
  ['workspace_id', 'String'],
  ['trace_id', 'String'],
  ['name', 'String'],
  ['session_id', 'String'],
  ['source', 'String'],
  ['environment', 'String'],
  ['service', 'String'],
  ['user_id', 'String'],
  ['tags', 'Array(String)'],
  ['status', 'String'],
  ['start_time', "DateTime64(6, 'UTC')"],
  ['duration_ms', 'Nullable(Float64)'],
  ['model', 'String'],
  ['cost_usd', 'Nullable(Float64)'],
  ['is_deleted', 'UInt8'],
] as const satisfies ReadonlyArray<readonly [keyof TraceSummaryRow, string]>;
const overlayTable = `format(JSONEachRow, '${overlayColumns.map(([name, type]) => `${name} ${type.replaceAll("'", "\\'")}`).join(', ')}', {overlayRows:String})`;

/** The overlay of pending traces' summaries, and their list items by trace id (a page's overlay rows come without). */
export function overlayOf(traceIds: string[], rows: TraceSummaryRow[]): { overlay: TraceOverlay; items: Map<string, string> } | undefined {
  if (traceIds.length === 0) return undefined;
  const line = (row: TraceSummaryRow) => JSON.stringify(Object.fromEntries(overlayColumns.map(([name]) => [name, row[name]])));
  return { overlay: { ids: traceIds, rows: rows.map(line).join('\n') }, items: new Map(rows.map((row) => [row.trace_id, row.item])) };
}

/** The condition of a row strictly after the cursor's (`afterKey`, `afterId`) in the sort's order; `1` without a cursor. */
function afterCursor(sort: TraceSort, after: { key: string; id: string } | undefined): string {
  const { key, type, desc } = traceSorts[sort];
  return after ? `(${key} ${desc ? '<' : '>'} {afterKey:${type}} OR (${key} = {afterKey:${type}} AND trace_id > {afterId:String}))` : '1';
}

/** What a page of summaries asks: the filter, the order, the cursor's row and how many rows. */
const pageParams = z.object({
  workspaceId,
  filter: traceFilterSchema,
  sort: sortSchema,
  after: z.object({ key: z.string(), id: z.string() }).optional(),
  fetch: z.number().int().min(1),
});

/**
 * A page of summaries in the sort's order, ties by trace id ascending, from `offset` or strictly
 * after a row (a cursor's sort key and trace id); `k` is the row's sort key as the engine
 * writes it, for the next cursor.
 */
export const selectTracePage = defineQuery({
  name: 'selectTracePage',
  params: pageParams.extend({
    offset: z.number().int().min(0),
    overlay: overlaySchema.optional(),
    /** Also count the filter's matches (`selectTraceCount`), on every row: one statement instead of two. */
    count: z.boolean().default(false),
  }),
  row: z.object({ trace_id: z.string(), item: z.string(), k: z.string(), total: z.number().optional() }),
  sql: ({ workspaceId, filter, sort, after, fetch, offset, overlay, count }) => {
    const { where, values } = traceSummaryFilter(filter);
    const { key, desc } = traceSorts[sort];
    const afterRow = after ? `AND ${afterCursor(sort, after)}` : '';
    const order = `${desc ? 'DESC' : 'ASC'}, trace_id ASC`;
    const total = count ? `, (${countOf(filter, overlay)}) AS total` : '';
    const bound = {
      ...values,
      workspaceId,
      fetch,
      offset,
      ...afterValues(after),
      ...(overlay && { overlayIds: overlay.ids, overlayRows: overlay.rows }),
    };
    if (!overlay) {
      return {
        values: bound,
        query: `
        SELECT trace_id, item, toString(${key}) AS k ${total}
        FROM traces FINAL
        WHERE ${where} ${afterRow}
        ORDER BY ${key} ${order}
        LIMIT {fetch:UInt32} OFFSET {offset:UInt32}`,
      };
    }
    // Each side cut at the page's end, then merged in the same order.
    return {
      values: { ...bound, reach: fetch + offset },
      query: `
        SELECT trace_id, item, k ${total} FROM (
          SELECT trace_id, item, toString(${key}) AS k, ${key} AS sort_key
          FROM traces FINAL
          WHERE ${where} AND trace_id NOT IN {overlayIds:Array(String)} ${afterRow}
          ORDER BY ${key} ${order}
          LIMIT {reach:UInt32}
          UNION ALL
          SELECT trace_id, '' AS item, toString(${key}) AS k, ${key} AS sort_key
          FROM ${overlayTable}
          WHERE ${traceSummaryFilter(filter, { candidates: false }).where} ${afterRow}
        )
        ORDER BY sort_key ${order}
        LIMIT {fetch:UInt32} OFFSET {offset:UInt32}`,
    };
  },
});

const newestStoredParams = z.object({
  workspaceId,
  pendingIds: z.array(z.string()).min(1),
  after: z.object({ key: z.string(), id: z.string() }).optional(),
});

/**
 * For the newest-first list without a filter, which the service merges with the pending traces
 * (unapplied-pages.ts), one narrow scan of the live stored summaries' keys: how many are not
 * pending (`total`); which pending traces the store holds a live summary of (`stored`: only their
 * stored rows are read to summarize them; one whose stored summary is deleted counts as not
 * stored, and replaying it from its writes alone gives the same summary, its stored spans being
 * deleted too); and the newest start time of those not pending after the cursor (`newest`,
 * null when none): pending traces that start later come first, and when they fill the page the
 * stored page is not read at all (under a steady ingest, the newest traces are the pending ones).
 */
export const selectNewestStoredKeys = defineQuery({
  name: 'selectNewestStoredKeys',
  params: newestStoredParams,
  row: z.object({ total: z.number(), stored: z.array(z.string()), newest: z.string().nullable() }),
  sql: ({ workspaceId, pendingIds, after }) => ({
    values: { workspaceId, pendingIds, ...afterValues(after) },
    query: `
      SELECT
        countIf(NOT pending) AS total,
        groupArrayIf(trace_id, pending) AS stored,
        if(countIf(NOT pending AND after) = 0, NULL, toString(maxIf(start_time, NOT pending AND after))) AS newest
      FROM (
        SELECT trace_id, start_time, trace_id IN {pendingIds:Array(String)} AS pending, ${afterCursor('-startTime', after)} AS after
        FROM traces FINAL
        WHERE workspace_id = {workspaceId:String} AND is_deleted = 0)`,
  }),
});

/**
 * The first `reach` live stored summaries after the cursor that are not pending, newest first,
 * ties by trace id: cut at `reach` plus one row per pending trace, then the pending ones left
 * out (a lookup a row of the cut, not of the scan), so that at most `reach` items come back
 * however many traces are pending (up to 10,000, one a span).
 */
export const selectNewestStored = defineQuery({
  name: 'selectNewestStored',
  params: newestStoredParams.extend({ reach: z.number().int().min(1) }),
  row: z.object({ trace_id: z.string(), item: z.string(), k: z.string() }),
  sql: ({ workspaceId, pendingIds, after, reach }) => {
    const { key } = traceSorts['-startTime'];
    return {
      values: { workspaceId, pendingIds, reach, ...afterValues(after) },
      query: `
        SELECT trace_id, item, k FROM (
          SELECT trace_id, item, toString(${key}) AS k FROM traces FINAL
          WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 AND ${afterCursor('-startTime', after)}
          ORDER BY ${key} DESC, trace_id ASC
          LIMIT {reach:UInt32} + length({pendingIds:Array(String)}))
        WHERE trace_id NOT IN {pendingIds:Array(String)}
        ORDER BY k DESC, trace_id ASC
        LIMIT {reach:UInt32}`,
    };
  },
});

/**
 * The sort keys of a page of summaries, without their items: the traces a search walks in the
 * list's order (search-pages.ts), a batch at a time, strictly after the last one read.
 */
export const selectTraceKeys = defineQuery({
  name: 'selectTraceKeys',
  /** `items`: with each row's list item (a batch that may be the page itself); `''` otherwise. */
  params: pageParams.extend({ items: z.boolean().default(false) }),
  row: z.object({ trace_id: z.string(), k: z.string(), item: z.string() }),
  sql: ({ workspaceId, filter, sort, after, fetch, items }) => {
    const { where, values } = traceSummaryFilter(filter);
    const { key, desc } = traceSorts[sort];
    return {
      values: { ...values, workspaceId, fetch, ...afterValues(after) },
      query: `
        SELECT trace_id, toString(${key}) AS k, ${items ? 'item' : "'' AS item"}
        FROM traces FINAL
        WHERE ${where} ${after ? `AND ${afterCursor(sort, after)}` : ''}
        ORDER BY ${key} ${desc ? 'DESC' : 'ASC'}, trace_id ASC
        LIMIT {fetch:UInt32}`,
    };
  },
});

/** An expression whose ascending order is the sort's order (a DateTime64 as its microseconds). */
function ascendingKey(sort: TraceSort): string {
  const { key, type, desc } = traceSorts[sort];
  const value = type.startsWith('DateTime64') ? `toUnixTimestamp64Micro(${key})` : key;
  return desc ? `-${value}` : value;
}

/**
 * In one scan of the filter's summaries: how many it matches (`total`) and the first `reach` of
 * them in the sort's order after the cursor, as `[trace id, sort key as text]`; their items are
 * read afterwards by key (`selectTraceItems`). For a filter whose condition is a costly
 * subquery (a score's: clickhouse/0020), which a page and a count statement would each compute
 * again. `total` counts the rows after the cursor: only a first page's is the filter's count.
 */
export const selectTraceKeysAndCount = defineQuery({
  name: 'selectTraceKeysAndCount',
  params: pageParams.omit({ fetch: true }).extend({ reach: z.number().int().min(1) }),
  row: z.object({ total: z.number(), keys: z.array(z.tuple([z.string(), z.string()])) }),
  sql: ({ workspaceId, filter, sort, after, reach }) => {
    const { where, values } = traceSummaryFilter(filter);
    return {
      values: { ...values, workspaceId, reach, ...afterValues(after) },
      query: `
        SELECT count() AS total,
          arrayMap(x -> (x.2, x.3), groupArraySorted({reach:UInt32})((${ascendingKey(sort)}, trace_id, toString(${traceSorts[sort].key})))) AS keys
        FROM traces FINAL
        WHERE ${where} ${after ? `AND ${afterCursor(sort, after)}` : ''}`,
    };
  },
});

/** The list items of these live traces (a page whose rows a search chose). */
export const selectTraceItems = defineQuery({
  name: 'selectTraceItems',
  params: z.object({ workspaceId, traceIds: z.array(z.string()).min(1) }),
  row: z.object({ trace_id: z.string(), item: z.string() }),
  sql: (values) => ({
    values,
    query: `
      SELECT trace_id, item FROM traces FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)} AND is_deleted = 0`,
  }),
});

/** The count of live summaries a filter matches; with an overlay, the stored ones it leaves plus its own. */
function countOf(filter: TraceFilter, overlay: TraceOverlay | undefined): string {
  const { where } = traceSummaryFilter(filter);
  if (!overlay) return `SELECT count() FROM traces FINAL WHERE ${where}`;
  return `
    SELECT
      (SELECT count() FROM traces FINAL WHERE ${where} AND trace_id NOT IN {overlayIds:Array(String)})
      + (SELECT count() FROM ${overlayTable} WHERE ${traceSummaryFilter(filter, { candidates: false }).where})`;
}

/** How many live summaries the filter matches (with an overlay, the stored ones it leaves plus its own). */
export const selectTraceCount = defineQuery({
  name: 'selectTraceCount',
  params: z.object({ workspaceId, filter: traceFilterSchema, overlay: overlaySchema.optional() }),
  row: z.object({ total: z.number() }),
  sql: ({ workspaceId, filter, overlay }) => ({
    values: {
      ...traceSummaryFilter(filter).values,
      workspaceId,
      ...(overlay && { overlayIds: overlay.ids, overlayRows: overlay.rows }),
    },
    query: `SELECT (${countOf(filter, overlay)}) AS total`,
  }),
});

// Sessions and users.

/**
 * Sessions and users: trace summaries (`traces FINAL`, one live row per trace) grouped by
 * session or user, within a window. No span is read and nothing is joined: a re-sent trace is
 * one summary row, a deleted one none, so the figures are exact at any time without a rollup
 * table to keep in step (docs/decisions/070-sessions-and-users.md). Figures follow the trace
 * rule of the summaries' usage; `errorCount` counts spans with status error, `traceErrorCount`
 * traces.
 *
 * Groups are ordered by their latest activity (a trace's end, or its start while it runs),
 * then by id; a page goes on strictly after the last group served (keyset, in HAVING).
 *
 * A page is one statement in two steps. The inner step picks the page's groups from the
 * window's summaries reading only the group id and the times: a group's latest activity is all
 * its order needs. The outer step computes the figures of those groups alone (an `IN` set, not
 * a join). Computing every figure of every group of the window (a hash table of a hundred
 * thousand sessions with their user sets, or of users with their session sets) cost twice to
 * three times as much at 10M spans (docs/benchmarks.md). A session's figures come from
 * `session_traces`, sorted by session, so they are key reads; a user's from `traces`.
 * One session's figures and page are read from `session_traces` (session-traces-table.ts).
 */

const groupPageParams = z.object({
  workspaceId,
  /** The window (startAfter, startBefore) and, for one group, its id (sessionId or userId). */
  filter: traceFilterSchema,
  /** Rows to fetch: one past the page tells whether more follow. */
  fetch: z.number().int().min(1),
  after: z.object({ key: z.string(), id: z.string() }).optional(),
});

const groupFigures = {
  id: z.string(),
  traceCount: z.number(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  costUsd: z.number(),
  errorCount: z.number(),
  traceErrorCount: z.number(),
  /** Stored times ('YYYY-MM-DD hh:mm:ss.ffffff', UTC). */
  firstStart: z.string(),
  activityKey: z.string(),
};

export const sessionGroupRow = z.object({
  ...groupFigures,
  lastEnd: z.string().nullable(),
  durationMs: z.number().nullable(),
  userIds: z.array(z.string()),
});
export type SessionRow = z.output<typeof sessionGroupRow>;

export const userGroupRow = z.object({ ...groupFigures, sessionCount: z.number() });
export type UserRow = z.output<typeof userGroupRow>;

/** The keyset condition of a page after a group: older activity, or the same and a higher id. */
const afterGroup = (column: string) =>
  `HAVING activity < {afterKey:DateTime64(6, 'UTC')} OR (activity = {afterKey:DateTime64(6, 'UTC')} AND ${column} > {afterId:String})`;

/** The group figures both lists give, over the rows of one statement. */
const sharedFigures = `count() AS traceCount,
          sum(ifNull(input_tokens, 0)) AS inputTokens,
          sum(ifNull(output_tokens, 0)) AS outputTokens,
          sum(ifNull(total_tokens, 0)) AS totalTokens,
          sum(ifNull(cost_usd, 0)) AS costUsd,
          sum(error_count) AS errorCount,
          countIf(status = 'error') AS traceErrorCount,
          toString(min(start_time)) AS firstStart,
          max(ifNull(end_time, start_time)) AS activity,
          toString(activity) AS activityKey`;

/** A session's figures (`sessionGroupRow` without its id), over its rows of one statement: also one session's (session-traces-table.ts). */
export const sessionFigures = `${sharedFigures},
          toString(max(end_time)) AS lastEnd,
          (toUnixTimestamp64Micro(max(end_time)) - toUnixTimestamp64Micro(min(start_time))) / 1000 AS durationMs,
          arraySlice(arraySort(groupUniqArrayIf(user_id, user_id != '')), 1, 5) AS userIds`;

/**
 * The ids of one page of groups (the inner step): each group's latest activity in the window,
 * ordered, after the cursor's group, `fetch` of them.
 */
function pageOfGroups(column: 'session_id' | 'user_id', where: string, after: boolean): string {
  return `SELECT id FROM (
          SELECT ${column} AS id, max(ifNull(end_time, start_time)) AS activity
          FROM traces FINAL
          WHERE ${where} AND ${column} != ''
          GROUP BY ${column}
          ${after ? afterGroup(column) : ''}
          ORDER BY activity DESC, id ASC
          LIMIT {fetch:UInt32})`;
}

/**
 * Sessions of the window, most recent activity first; with `withUser`, only the sessions in
 * which that user has a trace in the window (a subquery, not a join: the session ids of the
 * user's traces, read through its candidate traces), each with all its figures.
 */
export const selectSessionGroups = defineQuery({
  name: 'selectSessionGroups',
  params: groupPageParams.extend({ withUser: z.string().optional() }),
  row: sessionGroupRow,
  sql: ({ workspaceId, filter, fetch, after, withUser }) => {
    const { where, values } = traceSummaryFilter(filter);
    const ofUser =
      withUser === undefined
        ? ''
        : ` AND session_id IN (SELECT session_id FROM traces FINAL WHERE ${where} AND user_id = {withUser:String}
            AND trace_id IN (${userTraceCandidates('{withUser:String}')}))`;
    // session_traces holds the summary columns the window filter reads (workspace, time, is_deleted).
    return {
      values: { ...values, workspaceId, fetch, ...(withUser !== undefined && { withUser }), ...afterValues(after) },
      query: `
        SELECT session_id AS id,
          ${sessionFigures}
        FROM session_traces FINAL
        WHERE ${where} AND session_id IN (${pageOfGroups('session_id', where + ofUser, after !== undefined)})
        GROUP BY session_id
        ORDER BY activity DESC, session_id ASC`,
    };
  },
});

/** Users of the window (or one user, by the filter's userId), most recent activity first. */
export const selectUserGroups = defineQuery({
  name: 'selectUserGroups',
  params: groupPageParams,
  row: userGroupRow,
  sql: ({ workspaceId, filter, fetch, after }) => {
    const { where, values } = traceSummaryFilter(filter);
    // One user (its page is itself): one pass over that user's summaries.
    const ofPage = filter.userId === undefined ? `user_id IN (${pageOfGroups('user_id', where, after !== undefined)})` : "user_id != ''";
    return {
      values: { ...values, workspaceId, fetch, ...afterValues(after) },
      query: `
        SELECT user_id AS id,
          ${sharedFigures},
          uniqExactIf(session_id, session_id != '') AS sessionCount
        FROM traces FINAL
        WHERE ${where} AND ${ofPage}
        GROUP BY user_id
        ${after && filter.userId !== undefined ? afterGroup('user_id') : ''}
        ORDER BY activity DESC, user_id ASC
        LIMIT {fetch:UInt32}`,
    };
  },
});

// Stats and analytics.

/**
 * Aggregates over the trace summaries (`traces FINAL`, filtered by `traceSummaryFilter`):
 * GET /api/traces/stats (analytics/stats.ts) and GET /api/traces/analytics (analytics/analytics.ts). Every figure
 * is computed in the engine over deduplicated rows.
 *
 * Span-level figures (by model, provider or kind) read the `by_model`, `by_provider` and
 * `by_kind` columns of the summaries (clickhouse/0001): each trace's spans already grouped per
 * dimension at ingest (summary.ts), usage counted by the rule of DESIGN.md (generation spans
 * only, other kinds only in a trace without one). So a span belongs to a range by its trace's
 * start time, like the trace-level figures, and a wide aggregate reads one row per trace.
 *
 * Percentiles are `quantilesExactInclusive`: exact (linear interpolation between the two
 * nearest values, the definition of most spreadsheets and numpy), where the sampling and
 * t-digest variants can miss by more than 1% on small or skewed groups. The engine answers
 * NaN (JSON null) for an average or percentile of nothing, and null for a sum that overflowed
 * (only values stored before the span bounds existed can): rows say so with `nullable`.
 */

const figure = z.number().nullable();

/** The figures of a group of traces (stats groups, analytics totals and buckets). */
const aggregateFigures = {
  traceCount: z.number(),
  spanCount: z.number(),
  errorCount: z.number(),
  inputTokens: figure,
  outputTokens: figure,
  totalTokens: figure,
  costUsd: figure,
  latencyAvg: figure,
  latencyPercentiles: z.array(figure),
  ttftPercentiles: z.array(figure),
};
export const aggregateRow = z.object(aggregateFigures);
export type AggregateRow = z.output<typeof aggregateRow>;

const statsRow = z.object({ key: z.string().nullable(), ...aggregateFigures });
const statsParams = z.object({ workspaceId, filter: traceFilterSchema, limit: z.number().int().min(1) });

export const spanDimensions = ['model', 'provider', 'kind'] as const;
export type Dimension = (typeof spanDimensions)[number];
/** Where each dimension sits in a `traces.ttfts` tuple (clickhouse/0005). */
const ttftIndex: Record<Dimension, number> = { model: 1, provider: 2, kind: 3 };

/** The figures of a stats group of spans: each trace's group of the dimension (`g`, traces.by_<dimension>), summed per value. */
const spanGroupFigures = (dimension: Dimension) => `
  count() AS traceCount,
  sum(g.spans) AS spanCount,
  sum(g.errors) AS errorCount,
  sum(g.input_tokens) AS inputTokens,
  sum(g.output_tokens) AS outputTokens,
  sum(g.total_tokens) AS totalTokens,
  sum(g.cost_usd) AS costUsd,
  avgArray(g.durations) AS latencyAvg,
  quantilesExactInclusiveArray(0.5, 0.95, 0.99)(g.durations) AS latencyPercentiles,
  quantilesExactInclusiveArray(0.5, 0.95)(
    arrayMap(x -> x.4, arrayFilter(x -> toString(x.${ttftIndex[dimension]}) = toString(g.key), ttfts))) AS ttftPercentiles`;

export const traceFields = ['source', 'service', 'user', 'session', 'name', 'tag'] as const;
/** The summary column each trace-level grouping reads; '' (not sent) is the null group. A tag groups per tag of the trace. */
const traceFieldColumns: Record<(typeof traceFields)[number], string> = {
  source: 'source',
  service: 'service',
  user: 'user_id',
  session: 'session_id',
  name: 'name',
  tag: 'tag',
};

/** Counts, sums and the mean latency of a group of traces, over the columns of their summaries (stats and analytics). */
const traceSums = `
  count() AS traceCount,
  sum(span_count) AS spanCount,
  countIf(status = 'error') AS errorCount,
  sum(ifNull(input_tokens, 0)) AS inputTokens,
  sum(ifNull(output_tokens, 0)) AS outputTokens,
  sum(ifNull(total_tokens, 0)) AS totalTokens,
  sum(ifNull(cost_usd, 0)) AS costUsd,
  avg(duration_ms) AS latencyAvg`;

/** The figures of a stats group of traces. */
const traceGroupFigures = `${traceSums},
  quantilesExactInclusive(0.5, 0.95, 0.99)(duration_ms) AS latencyPercentiles,
  quantilesExactInclusiveArray(0.5, 0.95)(arrayMap(x -> x.4, ttfts)) AS ttftPercentiles`;

const sqlPart = z.object({ sql: z.string(), values: z.record(z.string(), z.unknown()) });

/**
 * How GET /api/traces/stats groups: spans by model, provider or kind (a trace counts in every
 * group one of its spans falls in); traces by a field of theirs (by tag, in each of its tags'
 * groups); or traces by score name, each in the group of every name it has a live score of (on
 * it or a span), `scoreNames` the scores feature's `(trace_id, key)` subquery (TraceScores.traceNames).
 */
const statsGroupingSchema = z.union([
  z.object({ dimension: z.enum(spanDimensions) }),
  z.object({ field: z.enum(traceFields) }),
  z.object({ scoreNames: sqlPart }),
]);
export type StatsGrouping = z.infer<typeof statsGroupingSchema>;

/**
 * Where a grouping's rows come from, over the summaries matching `where`: the group's key as
 * stored (`stored`: the null group's key ''), the key a stats row shows, the figures, the rows
 * with their condition, and what the statement groups by.
 */
function statsSource(grouping: StatsGrouping, where: string) {
  if ('dimension' in grouping) {
    const stored = 'toString(g.key)';
    const rows = `traces FINAL ARRAY JOIN by_${grouping.dimension} AS g WHERE ${where}`;
    return { stored, key: `nullIf(${stored}, '')`, figures: spanGroupFigures(grouping.dimension), rows, groupBy: 'g.key' };
  }
  if ('field' in grouping) {
    const stored = traceFieldColumns[grouping.field];
    const rows = `traces FINAL ${grouping.field === 'tag' ? 'LEFT ARRAY JOIN tags AS tag' : ''} WHERE ${where}`;
    return { stored, key: `nullIf(${stored}, '')`, figures: traceGroupFigures, rows, groupBy: 'key' };
  }
  const rows = `(
          SELECT trace_id, span_count, status, input_tokens, output_tokens, total_tokens, cost_usd, duration_ms, ttfts
          FROM traces FINAL WHERE ${where}) AS t
        INNER JOIN (${grouping.scoreNames.sql}) AS sn USING (trace_id)`;
  return { stored: 'key', key: 'sn.key', figures: traceGroupFigures, rows, groupBy: 'key' };
}

/** Stats groups, by the costliest first: one row per group of the grouping (`statsSource`). */
export const selectStats = defineQuery({
  name: 'selectStats',
  params: statsParams.extend({ grouping: statsGroupingSchema }),
  row: statsRow,
  sql: ({ workspaceId, filter, limit, grouping }) => {
    const { where, values } = traceSummaryFilter(filter);
    const source = statsSource(grouping, where);
    return {
      values: { ...('scoreNames' in grouping ? grouping.scoreNames.values : {}), ...values, workspaceId, limit },
      query: `
        SELECT ${source.key} AS key, ${source.figures}
        FROM ${source.rows}
        GROUP BY ${source.groupBy}
        ORDER BY costUsd DESC, traceCount DESC, key ASC NULLS LAST
        LIMIT {limit:UInt32}`,
    };
  },
});

/**
 * The traces of some stats groups, as a subquery of `(key, trace_id)` rows (the null group's key
 * ''), a trace once per group it counts in: what the scores feature averages per group
 * (TraceScores.averagesOfGroups). Its parameters are in `values`, `workspaceId` left to the caller.
 */
export function statsGroupTraces(
  grouping: StatsGrouping,
  filter: TraceFilter,
  keys: string[],
): { sql: string; values: Record<string, unknown> } {
  const { where, values } = traceSummaryFilter(filter);
  const inKeys = 'key IN {groupKeys:Array(String)}';
  const all = { ...values, groupKeys: keys };
  if ('scoreNames' in grouping) {
    return {
      sql: `SELECT key, trace_id FROM (${grouping.scoreNames.sql}) WHERE ${inKeys} AND trace_id IN (SELECT trace_id FROM traces FINAL WHERE ${where})`,
      values: { ...grouping.scoreNames.values, ...all },
    };
  }
  const source = statsSource(grouping, where);
  return { sql: `SELECT DISTINCT ${source.stored} AS key, trace_id FROM ${source.rows} AND ${inKeys}`, values: all };
}

/** An analytics bucket: the start of the hour or day a trace starts in. */
const buckets = { hour: 'toStartOfHour(start_time)', day: 'toStartOfDay(start_time)' } as const;

/**
 * Analytics totals and one row per time bucket in one pass: GROUPING SETS computes the total
 * row (`isTotal = 1`) beside the buckets, so no figure is summed outside the engine. The outer
 * SELECT derives rates, efficiency and the budget block from the same aggregates.
 */
export const selectAnalyticsTotals = defineQuery({
  name: 'selectAnalyticsTotals',
  params: z.object({
    workspaceId,
    filter: traceFilterSchema,
    interval: z.enum(['hour', 'day']),
    budget: z.number().min(0),
    projectionFactor: z.number(),
  }),
  row: z.object({
    ...aggregateFigures,
    isTotal: z.number(),
    bucket: z.number(),
    completedCount: z.number(),
    errorRate: figure,
    costPerTrace: figure,
    costPer1kTokens: figure,
    tokensPerTrace: figure,
    costPerSuccessfulTrace: figure,
    remainingUsd: figure,
    utilization: figure,
    exceeded: z.union([z.boolean(), z.number()]).nullable(),
    projectedUsd: figure,
    costProvided: figure,
    costComputed: figure,
    unpricedSpanCount: z.number(),
  }),
  sql: ({ workspaceId, filter, interval, budget, projectionFactor }) => {
    const { where, values } = traceSummaryFilter(filter);
    return {
      values: { ...values, workspaceId, budget, projectionFactor },
      query: `
        SELECT *,
          if(traceCount = 0, 0, errorCount / traceCount) AS errorRate,
          if(traceCount = 0, NULL, costUsd / traceCount) AS costPerTrace,
          if(totalTokens = 0, NULL, costUsd * 1000 / totalTokens) AS costPer1kTokens,
          if(traceCount = 0, NULL, totalTokens / traceCount) AS tokensPerTrace,
          if(completedCount = 0, NULL, costUsd / completedCount) AS costPerSuccessfulTrace,
          {budget:Float64} - costUsd AS remainingUsd,
          if({budget:Float64} = 0, NULL, costUsd / {budget:Float64}) AS utilization,
          costUsd > {budget:Float64} AS exceeded,
          costUsd * {projectionFactor:Float64} AS projectedUsd
        FROM (
          SELECT grouping(bucket) AS isTotal,
            toUnixTimestamp(${buckets[interval]}) AS bucket, ${traceSums},
            quantilesExactInclusive(0.5, 0.9, 0.95, 0.99)(duration_ms) AS latencyPercentiles,
            quantilesExactInclusiveArray(0.5, 0.95)(arrayMap(x -> x.4, ttfts)) AS ttftPercentiles,
            -- Successful traces: completed without error; running ones are not (yet) successes.
            countIf(status = 'completed') AS completedCount,
            -- How complete the cost is (clickhouse/0006): by source, and the spans without a price.
            sum(cost_provided) AS costProvided,
            sum(cost_computed) AS costComputed,
            sum(unpriced_spans) AS unpricedSpanCount
          FROM traces FINAL
          WHERE ${where}
          GROUP BY GROUPING SETS ((), (bucket))
        )
        ORDER BY isTotal DESC, bucket ASC`,
    };
  },
});

/**
 * Cost per model, provider and kind from the summaries' span groups: one ARRAY JOIN per
 * dimension over its key and cost subcolumns only (never the durations), grouped on the stored
 * LowCardinality keys; shares are each group's part of its dimension's total, computed by a
 * window in the engine.
 */
export const selectCostBreakdown = defineQuery({
  name: 'selectCostBreakdown',
  params: z.object({ workspaceId, filter: traceFilterSchema }),
  row: z.object({ dimension: z.enum(spanDimensions), key: z.string().nullable(), costUsd: figure, share: figure }),
  sql: ({ workspaceId, filter }) => {
    const { where, values } = traceSummaryFilter(filter);
    return {
      values: { ...values, workspaceId },
      query: `
        SELECT dimension, key, costUsd,
          if(sum(costUsd) OVER (PARTITION BY dimension) = 0, 0, costUsd / sum(costUsd) OVER (PARTITION BY dimension)) AS share
        FROM (
          SELECT 'model' AS dimension, nullIf(toString(k), '') AS key, sum(c) AS costUsd
          FROM traces FINAL ARRAY JOIN by_model.key AS k, by_model.cost_usd AS c WHERE ${where} GROUP BY k
          UNION ALL
          SELECT 'provider' AS dimension, nullIf(toString(k), '') AS key, sum(c) AS costUsd
          FROM traces FINAL ARRAY JOIN by_provider.key AS k, by_provider.cost_usd AS c WHERE ${where} GROUP BY k
          UNION ALL
          SELECT 'kind' AS dimension, nullIf(toString(k), '') AS key, sum(c) AS costUsd
          FROM traces FINAL ARRAY JOIN by_kind.key AS k, by_kind.cost_usd AS c WHERE ${where} GROUP BY k
        )
        ORDER BY dimension, costUsd DESC, key ASC NULLS LAST`,
    };
  },
});

// What changed.

/**
 * What changed in `traces`: the summaries written after a version, in version order (the
 * evaluators' scan, src/traces/query/evaluation-targets.ts). Each write of a trace's summary
 * takes a newer version (summaries/recompute.ts), so a trace whose start moved back or that was
 * stored after a later-started one is found by the write, whatever its start time.
 */

/**
 * A page of the live summaries whose newest row is above `afterVersion`, by version then trace
 * id, strictly after the cursor's (`after`) when given, matching the filter. Only rows above the
 * version are read (the minmax index of clickhouse/0021 skips the granules written before it);
 * a trace's newest row is among them whenever any is, so taking each trace's highest there is
 * its live row (`written`: its version). The filter takes the columns read there: name,
 * source, environment, tags, start.
 */
export const selectChangedTraces = defineQuery({
  name: 'selectChangedTraces',
  params: z.object({
    workspaceId,
    filter: traceFilterSchema,
    afterVersion: versionText,
    /** Leaves out the traces of this source (the evaluators' own). */
    exceptSource: z.string().optional(),
    after: z.object({ version: versionText, id: z.string() }).optional(),
    fetch: z.number().int().min(1),
  }),
  row: z.object({
    trace_id: z.string(),
    started: z.string(),
    ended: z.string().nullable(),
    source: z.string(),
    written: versionText,
  }),
  sql: ({ workspaceId, filter, afterVersion, exceptSource, after, fetch }) => {
    const { where, values } = traceSummaryFilter(filter, { candidates: false });
    // A page after a cursor reads only the rows from the cursor's version on: a trace whose live
    // row is past the cursor has it there, and those whose live row is older were on earlier pages.
    const [from, cursor] = after
      ? [
          'version >= {afterRowVersion:UInt64}',
          'AND (version > {afterRowVersion:UInt64} OR (version = {afterRowVersion:UInt64} AND trace_id > {afterId:String}))',
        ]
      : ['1', ''];
    const except = exceptSource === undefined ? '' : 'AND source != {exceptSource:String}';
    return {
      values: {
        ...values,
        workspaceId,
        afterVersion,
        fetch,
        ...(exceptSource !== undefined && { exceptSource }),
        ...(after && { afterRowVersion: after.version, afterId: after.id }),
      },
      query: `
        SELECT trace_id, toString(start_time) AS started, toString(end_time) AS ended, source, toString(version) AS written
        FROM (
          SELECT workspace_id, trace_id, name, source, environment, tags, start_time, end_time, version, is_deleted FROM traces
          WHERE workspace_id = {workspaceId:String} AND version > {afterVersion:UInt64} AND ${from}
          ORDER BY version DESC
          LIMIT 1 BY trace_id)
        WHERE ${where} ${except} ${cursor}
        ORDER BY version ASC, trace_id ASC
        LIMIT {fetch:UInt32}`,
    };
  },
});
