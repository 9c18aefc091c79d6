import type { ClickHouseClient } from '../stores/clickhouse.js';
import { validationError } from '../http/errors.js';
import { decodeCursor, encodeCursor, queryDigest, type CursorState } from './cursor.js';
import { defaultQueryLimits, limitSettings, resolveWindow, type QueryLimits, type Window } from './query-limits.js';
import { selectSpans } from './queries.js';
import type { ListTracesQuery, TraceListItem, TraceSort } from './schemas.js';
import { traceFilterWhere, type TraceFilter } from './span-groups.js';
import { groupSpansByTrace, toTraceListItem } from './tree.js';

/**
 * GET /api/traces: filters, sorts, offset and cursor pages over the trace summaries (never
 * spans, unless include=spans). Also the page of a session's traces (sessions/).
 *
 * The newest-first list (the default sort) keeps the specification's behaviour: without
 * startAfter it covers all time; it is a top-N of the summaries' start times, cut at the page.
 * Any other sort must order the whole matching set before its first row, so it reads a window:
 * by default the last 30 days, at most LOUPE_QUERY_MAX_WINDOW_DAYS.
 */

const timeType = "DateTime64(6, 'UTC')";
interface SortSpec {
  /** The ordering expression; NULLs (running traces, traces without usage) come last either way. */
  key: string;
  type: string;
  desc: boolean;
}
export const sortSpecs: Record<TraceSort, SortSpec> = {
  '-startTime': { key: 'start_time', type: timeType, desc: true },
  startTime: { key: 'start_time', type: timeType, desc: false },
  '-durationMs': { key: 'ifNull(duration_ms, -1e308)', type: 'Float64', desc: true },
  durationMs: { key: 'ifNull(duration_ms, 1e308)', type: 'Float64', desc: false },
  '-costUsd': { key: 'ifNull(cost_usd, -1e308)', type: 'Float64', desc: true },
  costUsd: { key: 'ifNull(cost_usd, 1e308)', type: 'Float64', desc: false },
};

const storedTimePattern = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$/;

/** A cursor's key must parse as the sort's type, or the engine would fail on the parameter. */
function checkedKey(state: CursorState, spec: SortSpec): string {
  const ok = spec.type === timeType ? storedTimePattern.test(state.k) : Number.isFinite(Number(state.k)) && state.k.trim() !== '';
  if (!ok) throw validationError('Invalid request: querystring.cursor: is not a cursor this API returned', [{ path: 'querystring.cursor', message: 'is not a cursor of this sort' }]);
  return state.k;
}

export interface TracePageRequest {
  filter: TraceFilter;
  sort: TraceSort;
  limit: number;
  offset: number;
  /** Start strictly after this row (a cursor's key and trace id). */
  after?: { key: string; id: string } | undefined;
  limits: QueryLimits;
}

export interface TracePage {
  rows: Array<{ trace_id: string; item: string; k: string }>;
  /** Whether a row follows the page (one more row than the limit was fetched). */
  more: boolean;
}

/** One page of summaries in the sort's order, ties by trace id ascending; one row past the limit tells whether more follow. */
export async function pageTraces(clickhouse: ClickHouseClient, workspaceId: string, request: TracePageRequest): Promise<TracePage> {
  const spec = sortSpecs[request.sort];
  const { where, params } = traceFilterWhere(request.filter);
  const clauses = [where];
  if (request.after) {
    clauses.push(`(${spec.key} ${spec.desc ? '<' : '>'} {afterKey:${spec.type}} OR (${spec.key} = {afterKey:${spec.type}} AND trace_id > {afterId:String}))`);
    params.afterKey = request.after.key;
    params.afterId = request.after.id;
  }
  const result = await clickhouse.query({
    query: `SELECT trace_id, item, toString(${spec.key}) AS k FROM traces FINAL WHERE ${clauses.join(' AND ')}
            ORDER BY ${spec.key} ${spec.desc ? 'DESC' : 'ASC'}, trace_id ASC LIMIT {fetch:UInt32} OFFSET {offset:UInt32}
            ${limitSettings(request.limits)}`,
    query_params: { ...params, workspaceId, fetch: request.limit + 1, offset: request.offset },
    format: 'JSONEachRow',
  });
  const fetched = await result.json<{ trace_id: string; item: string; k: string }>();
  return { rows: fetched.slice(0, request.limit), more: fetched.length > request.limit };
}

async function countTraces(clickhouse: ClickHouseClient, workspaceId: string, filter: TraceFilter, limits: QueryLimits): Promise<number> {
  const { where, params } = traceFilterWhere(filter);
  const result = await clickhouse.query({
    query: `SELECT count() AS total FROM traces FINAL WHERE ${where} ${limitSettings(limits)}`,
    query_params: { ...params, workspaceId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ total: number }>();
  return Number(row?.total ?? 0);
}

export const tagsOf = (tag: string | string[] | undefined): string[] | undefined => (tag === undefined ? undefined : [tag].flat());

/** The list's filter; the window replaces startAfter / startBefore when the read is windowed. */
function listFilter(query: ListTracesQuery, window: Window | undefined): TraceFilter {
  return {
    sessionId: query.sessionId,
    status: query.status,
    source: query.source,
    environment: query.environment,
    service: query.service,
    userId: query.userId,
    tags: tagsOf(query.tag),
    name: query.name,
    model: query.model,
    minDurationMs: query.minDurationMs,
    minCostUsd: query.minCostUsd,
    startAfter: window ? window.from : query.startAfter,
    startBefore: window ? window.to : query.startBefore,
  };
}

/**
 * A page of the list and its pagination. Without a cursor the page tells the count itself when
 * it is the last one (offset plus its rows); otherwise one count statement. A cursor page takes
 * the total its first page counted (carried in the cursor), so a walk counts once.
 */
export async function listTraces(clickhouse: ClickHouseClient, workspaceId: string, query: ListTracesQuery, limits: QueryLimits = defaultQueryLimits) {
  const sort = query.sort ?? '-startTime';
  const spec = sortSpecs[sort];
  const digest = queryDigest(query);
  const state = query.cursor !== undefined ? decodeCursor(query.cursor, digest) : undefined;
  const windowed = sort !== '-startTime';
  const window = !windowed ? undefined : state?.w ? { from: state.w[0], to: state.w[1] } : resolveWindow(query.startAfter, query.startBefore, limits);
  const filter = listFilter(query, window);
  const offset = state ? 0 : query.offset;
  const after = state ? { key: checkedKey(state, spec), id: state.id } : undefined;
  const { rows, more } = await pageTraces(clickhouse, workspaceId, { filter, sort, limit: query.limit, offset, after, limits });

  let total: number;
  if (state?.t !== undefined) total = state.t;
  else if (!state && !more && (rows.length > 0 || offset === 0)) total = offset + rows.length;
  else total = await countTraces(clickhouse, workspaceId, filter, limits);

  const last = rows.at(-1);
  const nextCursor =
    more && last ? encodeCursor({ q: digest, k: last.k, id: last.trace_id, ...(window && { w: [window.from, window.to] as [string, string] }), t: total }) : null;

  let items: TraceListItem[] = rows.map((row) => toTraceListItem(row.item));
  if (query.include === 'spans') {
    const spans = groupSpansByTrace(await selectSpans(clickhouse, workspaceId, rows.map((r) => r.trace_id)));
    items = items.map((item) => ({ ...item, spans: spans.get(item.traceId) ?? [] }));
  }
  return { items, pagination: { limit: query.limit, offset: query.offset, total, hasMore: more, nextCursor } };
}
