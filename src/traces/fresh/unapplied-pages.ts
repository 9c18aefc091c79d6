import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { pendingSummaries, pendingTraceIds, pendingTraces } from './pending-summaries.js';
import {
  type TraceFilter,
  overlayOf,
  selectNewestStored,
  selectNewestStoredKeys,
  selectTraceCount,
  selectTracePage,
} from '../tables/traces-table.js';
import type { TraceSort } from '../model/schemas.js';
import type { WriteBatcher, UnappliedWrites } from '../writer/write-batcher.js';

/** A page of the list: its rows in order, and with `count` asked, the filter's total. */
export interface PageRequest {
  filter: TraceFilter;
  sort: TraceSort;
  after?: { key: string; id: string } | undefined;
  fetch: number;
  offset: number;
  count: boolean;
}
export interface PageRow {
  trace_id: string;
  /** The list item as JSON text. */
  item: string;
  /** The row's sort key as the engine writes it, for the next cursor. */
  k: string;
}

/**
 * The list's pages while answered writes of the workspace are not yet applied: the summaries
 * the flushes will give the pending traces take the place of the stored ones
 * (docs/decisions/081-reads-over-unapplied-writes.md), in one of two ways:
 *
 * - for any filter and order, the engine lays them over the store (`overlaid`): every pending
 *   trace is summarized first, and the page statement reads those summaries with the filter;
 * - for the newest-first list without a filter (the console's first screen, and most reads
 *   under ingest), the service merges them (`merged`): a scan of the stored keys counts the
 *   stored traces, tells which pending traces the store holds (only their spans are read) and
 *   the newest stored start time; the pending traces need only their start times, the stored
 *   page is read only when those that start later do not fill the page, and a summary each
 *   for the page's pending rows alone (docs/decisions/083-newest-first-list-merged-by-the-service.md,
 *   085-pending-traces-ahead-of-the-stored-page.md).
 */
export interface UnappliedTraces {
  /** Every pending trace. */
  ids: ReadonlySet<string>;
  page(request: PageRequest, settings: string): Promise<{ rows: PageRow[]; total?: number | undefined }>;
  count(filter: TraceFilter, settings: string): Promise<number>;
  /** Resolves once these traces' answered writes are applied (undefined: nothing to wait for). */
  applied(traceIds: string[]): Promise<void> | undefined;
}

const unfiltered = (filter: TraceFilter) => Object.values(filter).every((value) => value === undefined);

/** The workspace's unapplied writes as a list reads them, if any (a 503 while the store is unavailable). */
export async function unappliedTraces(
  writer: WriteBatcher,
  clickhouse: ClickHouseClient,
  workspaceId: string,
  { filter, sort }: { filter: TraceFilter; sort: TraceSort },
): Promise<UnappliedTraces | undefined> {
  const unapplied = writer.unapplied(workspaceId);
  if (!unapplied) return undefined;
  const applied = (ids: string[]) => writer.readable(workspaceId, ids);
  if (sort === '-startTime' && unfiltered(filter)) return merged(clickhouse, workspaceId, unapplied, applied);
  return overlaid(clickhouse, workspaceId, unapplied, applied);
}

async function overlaid(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  unapplied: UnappliedWrites,
  applied: UnappliedTraces['applied'],
): Promise<UnappliedTraces | undefined> {
  const { traceIds, rows } = await pendingSummaries(clickhouse, workspaceId, unapplied);
  const laid = overlayOf(traceIds, rows);
  if (!laid) return undefined;
  const { overlay, items } = laid;
  return {
    ids: new Set(traceIds),
    applied,
    async page(request, settings) {
      const fetched = await selectTracePage(clickhouse, { workspaceId, ...request, overlay }, settings);
      // A pending trace's row comes without its item, which the overlay holds.
      const rows = fetched.map(({ trace_id, item, k }) => ({ trace_id, item: item || (items.get(trace_id) ?? ''), k }));
      return { rows, total: fetched[0]?.total };
    },
    async count(filter, settings) {
      return (await selectTraceCount(clickhouse, { workspaceId, filter, overlay }, settings))[0]?.total ?? 0;
    },
  };
}

/** ClickHouse orders strings by their UTF-8 bytes; JavaScript's `<` by UTF-16 units (they differ past U+FFFF). */
const compareBytes = (a: string, b: string) => (a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** Newest first, ties by trace id ascending: the engine's order of the list (traceSorts). */
const newestFirst = (a: { k: string; trace_id: string }, b: { k: string; trace_id: string }) =>
  a.k < b.k ? 1 : a.k > b.k ? -1 : compareBytes(a.trace_id, b.trace_id);

function merged(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  unapplied: UnappliedWrites,
  applied: UnappliedTraces['applied'],
): UnappliedTraces {
  const pendingIds = pendingTraceIds(unapplied);
  const ids = new Set(pendingIds);
  const page: UnappliedTraces['page'] = async ({ after, fetch, offset, count }, settings) => {
    const reach = offset + fetch;
    const [keys] = await selectNewestStoredKeys(clickhouse, { workspaceId, pendingIds, after }, settings);
    if (!keys) throw new Error('selectNewestStoredKeys: no row');
    const pending = await pendingTraces(clickhouse, workspaceId, unapplied, keys.stored);
    // The pending traces strictly after the cursor, as the statements read the stored ones.
    const candidates: PageRow[] = [];
    for (const [trace_id, start] of pending.starts) {
      if (!after || start < after.key || (start === after.key && compareBytes(trace_id, after.id) > 0)) {
        candidates.push({ trace_id, item: '', k: start });
      }
    }
    // Pending traces that start after every stored one come first: when they fill the page, the
    // stored page is not read (the common case under a steady ingest).
    const ahead = candidates.filter((row) => keys.newest === null || row.k > keys.newest).length;
    if (ahead < reach) {
      const stored = await selectNewestStored(clickhouse, { workspaceId, pendingIds, after, reach }, settings);
      candidates.push(...stored);
    }
    const rows = candidates.sort(newestFirst).slice(offset, reach);
    // Only the page's pending traces are summarized, for their items.
    const summaries = await pending.summaries(rows.filter((row) => ids.has(row.trace_id)).map((row) => row.trace_id));
    const items = new Map(summaries.map((summary) => [summary.trace_id, summary.item]));
    for (const row of rows) if (ids.has(row.trace_id)) row.item = items.get(row.trace_id)!;
    return { rows, total: count ? keys.total + pending.starts.size : undefined };
  };

  return {
    ids,
    applied,
    page,
    async count(filter, settings) {
      return (await page({ filter, sort: '-startTime', fetch: 1, offset: 0, count: true }, settings)).total ?? 0;
    },
  };
}
