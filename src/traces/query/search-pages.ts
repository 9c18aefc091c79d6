import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { selectSearchCandidates, selectSearchHits, type SearchHit } from '../tables/spans-table.js';
import { type TraceFilter, selectTraceCount, selectTraceItems, selectTraceKeys, selectTracePage } from '../tables/traces-table.js';
import type { PageRequest, PageRow } from '../fresh/unapplied-pages.js';

/**
 * A page of a full-text search of the list (GET /api/traces?q=, search.ts), read newest
 * candidates first (docs/api.md, "Full-text search"):
 *
 * - A selective search (fewer than `scanFrom` traces hold its words by the text index, which
 *   finds them from its own lists without reading any text) checks the texts of those
 *   candidates' spans only (read by their key; each trace's first matching span comes with its
 *   texts, for the highlight), then reads the page and the exact count of the traces that
 *   pass, by their ids, with the other filters.
 * - A broad one would check the texts of most of the workspace before its first row: instead it
 *   walks the traces the other filters match in the list's order, a batch at a time (the page's
 *   reach, then as many as the share of matches so far says the page needs, with room to
 *   spare), checks the texts of each batch's spans only (read by their key; each trace's first
 *   matching span comes with its texts, for the highlight), and stops once the page is full.
 *   If three batches do not fill it (the words are common, but not among these traces), the
 *   page statement reads the rest after the last trace walked.
 *
 * A broad search's total is exact when its walk reached the end; otherwise it is estimated:
 * the share of matching traces among those walked, times the count of traces the other filters
 * match (counting every match exactly would check the texts of the whole workspace).
 */

/** Batches a broad search walks before the page statement takes over. */
const walkedBatches = 3;
/** The most traces one batch checks (their ids are bound in the statement). */
const maxBatch = 10_000;

export async function searchPage(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  request: PageRequest,
  settings: string,
  scanFrom: number,
): Promise<{ rows: PageRow[]; total?: number | undefined; hits?: Map<string, SearchHit> }> {
  const { filter, sort, fetch, offset } = request;
  const search = filter.text;
  if (!search) throw new Error('searchPage: the filter has no text');
  const candidates = await selectSearchCandidates(clickhouse, { workspaceId, search, cap: scanFrom }, settings);
  if (candidates.length < scanFrom) {
    // Selective: the candidates' first matching spans with their texts (the check, and the
    // highlights), then the page and count of the traces that pass, by their ids.
    const hits = new Map<string, SearchHit>();
    if (candidates.length > 0) {
      const traceIds = candidates.map((r) => r.trace_id);
      for (const hit of await selectSearchHits(clickhouse, { workspaceId, traceIds, search }, settings)) hits.set(hit.trace_id, hit);
    }
    if (hits.size === 0) return { rows: [], total: 0 };
    const passed: TraceFilter = { ...filter, text: undefined, traceIds: [...hits.keys()] };
    const rows = await selectTracePage(clickhouse, { workspaceId, ...request, filter: passed }, settings);
    const total =
      !request.count || rows[0]?.total !== undefined
        ? rows[0]?.total
        : (await selectTraceCount(clickhouse, { workspaceId, filter: passed }, settings))[0]?.total;
    return { rows: rows.map(({ trace_id, item, k }) => ({ trace_id, item, k })), total, hits };
  }

  const others: TraceFilter = { ...filter, text: undefined };
  const reach = offset + fetch;
  const found: PageRow[] = [];
  let after = request.after;
  let batch = reach;
  let walked = 0;
  let exhausted = false;
  const hits = new Map<string, SearchHit>();
  for (let round = 0; round < walkedBatches && found.length < reach; round++) {
    const keys = await selectTraceKeys(
      clickhouse,
      { workspaceId, filter: others, sort, after, fetch: batch, items: round === 0 },
      settings,
    );
    walked += keys.length;
    if (keys.length > 0) {
      // Each batch trace's first matching span with its texts: the check, and the hit's highlight.
      const traceIds = keys.map((row) => row.trace_id);
      for (const hit of await selectSearchHits(clickhouse, { workspaceId, traceIds, search }, settings)) hits.set(hit.trace_id, hit);
      for (const row of keys) if (hits.has(row.trace_id)) found.push(row);
    }
    if (keys.length < batch) {
      exhausted = true;
      break;
    }
    const last = keys[keys.length - 1]!;
    after = { key: last.k, id: last.trace_id };
    // The next batch from the share of matches so far, with room to spare (eight times larger
    // when none matched yet).
    const share = found.length / walked;
    batch = Math.min(maxBatch, Math.max(reach, share > 0 ? Math.ceil((1.5 * (reach - found.length)) / share) : batch * 8));
  }

  const matches: PageRow[] = found.map(({ trace_id, item, k }) => ({ trace_id, item, k }));
  if (!exhausted && found.length < reach) {
    // The rest from the page statement, after the last trace walked.
    const want = reach - found.length;
    const rest = await selectTracePage(clickhouse, { workspaceId, filter, sort, after, fetch: want, offset: 0 }, settings);
    exhausted = rest.length < want;
    matches.push(...rest.map(({ trace_id, item, k }) => ({ trace_id, item, k })));
  }
  const rows = matches.slice(offset, reach);
  const missing = rows.filter((row) => row.item === '').map((row) => row.trace_id);
  if (missing.length > 0) {
    const items = new Map(
      (await selectTraceItems(clickhouse, { workspaceId, traceIds: missing }, settings)).map((r) => [r.trace_id, r.item]),
    );
    for (const row of rows) if (row.item === '') row.item = items.get(row.trace_id) ?? '';
  }
  // A trace deleted between the statements drops out.
  const live = rows.filter((row) => row.item !== '');

  if (!request.count || request.after) return { rows: live, hits };
  if (exhausted) return { rows: live, total: matches.length, hits };
  const [all] = await selectTraceCount(clickhouse, { workspaceId, filter: others }, settings);
  const estimate = Math.round(((all?.total ?? 0) * found.length) / Math.max(1, walked));
  return { rows: live, total: Math.max(estimate, offset + live.length), hits };
}
