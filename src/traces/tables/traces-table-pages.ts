import { z } from 'zod';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { afterValues } from '../model/cursor.js';
import type { TraceSort } from '../model/schemas.js';
import type { TraceSummaryRow } from './summary-rows.js';
import { traceFilterSchema, traceSummaryFilter, type TraceFilter } from './traces-table.js';
import { workspaceId } from './params.js';

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
