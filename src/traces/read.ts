import type { ClickHouseClient } from '../stores/clickhouse.js';
import { notFound } from '../http/errors.js';
import { findTraceWithSpans, listTraceSummaries, selectSpans, tombstoneTrace, traceExists } from './queries.js';
import type { ListTracesQuery, TraceDetail, TraceListItem } from './schemas.js';
import { groupSpansByTrace, toStoredSpan, toTraceListItem } from './tree.js';

/** Newest first; with include=spans each item also carries its flat span list. */
export async function listTraces(clickhouse: ClickHouseClient, workspaceId: string, query: ListTracesQuery) {
  const { rows, total } = await listTraceSummaries(clickhouse, workspaceId, query);
  let items: TraceListItem[] = rows.map((row) => toTraceListItem(row.item));
  if (query.include === 'spans') {
    const spans = groupSpansByTrace(await selectSpans(clickhouse, workspaceId, rows.map((r) => r.trace_id)));
    items = items.map((item) => ({ ...item, spans: spans.get(item.traceId) ?? [] }));
  }
  const pagination = { limit: query.limit, offset: query.offset, total, hasMore: query.offset + items.length < total };
  return { items, pagination };
}

export async function getTrace(clickhouse: ClickHouseClient, workspaceId: string, traceId: string): Promise<TraceDetail> {
  const row = await findTraceWithSpans(clickhouse, workspaceId, traceId);
  if (!row) throw notFound('Trace', { traceId });
  return { ...toTraceListItem(row.item), spans: row.spans.map(toStoredSpan) };
}

export async function deleteTrace(clickhouse: ClickHouseClient, workspaceId: string, traceId: string) {
  if (!(await traceExists(clickhouse, workspaceId, traceId))) throw notFound('Trace', { traceId });
  await tombstoneTrace(clickhouse, workspaceId, traceId);
  return { traceId, deleted: true as const };
}
