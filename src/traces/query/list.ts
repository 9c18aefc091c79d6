import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { validationError } from '../../http/wire/errors.js';
import { decodeCursor, encodeCursor, queryDigest, type CursorState } from '../model/cursor.js';
import { defaultQueryLimits, limitSettings, resolveWindow, type QueryLimits, type Window } from '../model/query-limits.js';
import type { ListTracesQuery, TraceListItem, TraceSort } from '../model/schemas.js';
import { selectSearchHits, selectSpanDetails, type SearchHit } from '../tables/spans-table.js';
import { searchPage } from './search-pages.js';
import { highlightOf, parseSearch, searchFields, type Highlight } from '../model/search.js';
import {
  type TraceFilter,
  selectTraceCount,
  selectTraceItems,
  selectTraceKeysAndCount,
  selectTracePage,
  traceSorts,
} from '../tables/traces-table.js';
import { groupSpansByTrace, toTraceListItem } from './tree.js';
import { unappliedTraces, type PageRow } from '../fresh/unapplied-pages.js';
import type { WriteBatcher } from '../writer/write-batcher.js';
import { storedTimePattern } from '../model/stored-time.js';

/**
 * GET /api/traces: filters, sorts, offset and cursor pages over the trace summaries (never
 * spans, unless include=spans).
 *
 * The newest-first list (the default sort) keeps the specification's behaviour: without
 * startAfter it covers all time; it is a top-N of the summaries' start times, cut at the page.
 * Any other sort must order the whole matching set before its first row, so it reads a window:
 * by default the last 30 days, at most LOUPE_QUERY_MAX_WINDOW_DAYS.
 *
 * Answered writes not yet applied are in the list at once without waiting for the writer: the
 * summaries the flushes will give their traces take the place of the stored ones, laid over
 * them by the engine or, for the newest-first list without a filter, merged by the service
 * (unapplied-pages.ts).
 */

/** A cursor's key must parse as the sort's type, or the engine would fail on the parameter. */
function checkedKey(state: CursorState, sort: TraceSort): string {
  const ok = traceSorts[sort].type.startsWith('DateTime64')
    ? storedTimePattern.test(state.k)
    : Number.isFinite(Number(state.k)) && state.k.trim() !== '';
  if (!ok)
    throw validationError('Invalid request: querystring.cursor: is not a cursor this API returned', [
      { path: 'querystring.cursor', message: 'is not a cursor of this sort' },
    ]);
  return state.k;
}

export const tagsOf = (tag: string | string[] | undefined): string[] | undefined => (tag === undefined ? undefined : [tag].flat());

/** The list's filter; the window replaces startAfter / startBefore when the read is windowed. */
function listFilter(query: ListTracesQuery, window: Window | undefined, scoreCondition: TraceFilter['scoreCondition']): TraceFilter {
  return {
    scoreCondition,
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
    text: query.q !== undefined ? parseSearch(query.q, query.searchIn) : undefined,
  };
}

/**
 * A page of the list and its pagination. Without a cursor the page tells the count itself when
 * it is the last one (offset plus its rows); otherwise one count statement (decision 007), or
 * over unapplied writes a count in the page's own statement, which runs under ingest and
 * already follows the key reads (decision 081). A cursor page takes the total its first page
 * counted (carried in the cursor), so a walk counts once.
 */
export async function listTraces(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  query: ListTracesQuery,
  limits: QueryLimits = defaultQueryLimits,
  writer?: WriteBatcher,
  /** Traces with a matching score (the scores feature's condition on `trace_id`). */
  scoreCondition?: TraceFilter['scoreCondition'],
) {
  const sort = query.sort ?? '-startTime';
  const digest = queryDigest(query);
  const state = query.cursor !== undefined ? decodeCursor(query.cursor, digest) : undefined;
  const windowed = sort !== '-startTime';
  const window = !windowed
    ? undefined
    : state?.w
      ? { from: state.w[0], to: state.w[1] }
      : resolveWindow(query.startAfter, query.startBefore, limits);
  const filter = listFilter(query, window, scoreCondition);
  const offset = state ? 0 : query.offset;
  const after = state ? { key: checkedKey(state, sort), id: state.id } : undefined;
  const settings = limitSettings(limits);
  const unapplied = writer && (await unappliedTraces(writer, clickhouse, workspaceId, { filter, sort }));
  // One row past the page tells whether more follow. Over unapplied writes (a list read under
  // ingest) a first page counts in the same statement.
  const request = { filter, sort, after, fetch: query.limit + 1, offset };
  const fetched: { rows: PageRow[]; total?: number | undefined; hits?: Map<string, SearchHit> | undefined } = unapplied
    ? await unapplied.page({ ...request, count: !state }, settings)
    : filter.text
      ? await searchPage(clickhouse, workspaceId, { ...request, count: !state }, settings, limits.searchScanFrom)
      : filter.scoreCondition
        ? await keyedPage(clickhouse, workspaceId, request, settings)
        : { rows: await selectTracePage(clickhouse, { workspaceId, ...request }, settings) };
  const rows = fetched.rows.slice(0, query.limit);
  const more = fetched.rows.length > query.limit;

  let total: number;
  if (state?.t !== undefined) total = state.t;
  else if (!state && !more && (rows.length > 0 || offset === 0)) total = offset + rows.length;
  else if (fetched.total !== undefined) total = fetched.total;
  else if (unapplied) total = await unapplied.count(filter, settings);
  else total = (await selectTraceCount(clickhouse, { workspaceId, filter }, settings))[0]?.total ?? 0;

  const last = rows.at(-1);
  const nextCursor =
    more && last
      ? encodeCursor({
          q: digest,
          k: last.k,
          id: last.trace_id,
          ...(window && { w: [window.from, window.to] as [string, string] }),
          t: total,
        })
      : null;

  let items: Array<TraceListItem & { highlight?: Highlight }> = rows.map((row) => toTraceListItem(row.item));
  if (query.include === 'spans' && rows.length > 0) {
    // The spans of a trace with unapplied writes are read once those are applied.
    const pending = unapplied ? rows.map((r) => r.trace_id).filter((id) => unapplied.ids.has(id)) : [];
    if (pending.length > 0) await unapplied?.applied(pending);
    const spans = groupSpansByTrace(await selectSpanDetails(clickhouse, { workspaceId, traceIds: rows.map((r) => r.trace_id) }));
    items = items.map((item) => ({ ...item, spans: spans.get(item.traceId) ?? [] }));
  }
  if (filter.text && rows.length > 0) {
    const highlights = await searchHighlights(
      clickhouse,
      workspaceId,
      filter.text,
      rows.map((r) => r.trace_id),
      fetched.hits,
    );
    items = items.map((item) => {
      const highlight = highlights.get(item.traceId);
      return highlight ? { ...item, highlight } : item;
    });
  }
  return { items, pagination: { limit: query.limit, offset: query.offset, total, hasMore: more, nextCursor } };
}

/**
 * A page of a filter by score: its keys and the filter's count in one statement, which computes
 * the score condition once (a page and a count statement would each compute it), then the
 * page's items by key. A trace deleted between the two reads is left out of the page.
 */
async function keyedPage(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  request: { filter: TraceFilter; sort: TraceSort; after: { key: string; id: string } | undefined; fetch: number; offset: number },
  settings: string,
): Promise<{ rows: PageRow[]; total: number }> {
  const { filter, sort, after, fetch, offset } = request;
  const [found] = await selectTraceKeysAndCount(clickhouse, { workspaceId, filter, sort, after, reach: offset + fetch }, settings);
  const keys = (found?.keys ?? []).slice(offset);
  const items =
    keys.length === 0
      ? new Map<string, string>()
      : new Map(
          (await selectTraceItems(clickhouse, { workspaceId, traceIds: keys.map(([id]) => id) }, settings)).map((r) => [
            r.trace_id,
            r.item,
          ]),
        );
  const rows = keys.flatMap(([id, k]) => {
    const item = items.get(id);
    return item === undefined ? [] : [{ trace_id: id, item, k }];
  });
  return { rows, total: found?.total ?? 0 };
}

/** Each hit's highlight: the first searched text of its first matching span that holds a term. */
async function searchHighlights(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  search: NonNullable<TraceFilter['text']>,
  traceIds: string[],
  /** Hits the page's read already holds (a broad search's walk): only the others are read. */
  known: Map<string, SearchHit> | undefined,
): Promise<Map<string, Highlight>> {
  const missing = known ? traceIds.filter((id) => !known.has(id)) : traceIds;
  const read = missing.length > 0 ? await selectSearchHits(clickhouse, { workspaceId, traceIds: missing, search }) : [];
  const hits = [...traceIds.flatMap((id) => known?.get(id) ?? []), ...read];
  const highlights = new Map<string, Highlight>();
  for (const hit of hits) {
    const texts = { names: hit.name, input: hit.input, output: hit.output, statusMessage: hit.status_message, attributes: hit.attributes };
    for (const field of searchFields.filter((f) => search.fields.includes(f))) {
      const found = highlightOf(texts[field], search.terms);
      if (found) {
        highlights.set(hit.trace_id, { spanId: hit.span_id, field, ...found });
        break;
      }
    }
  }
  return highlights;
}
