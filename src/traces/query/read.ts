import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { notFound } from '../../http/wire/errors.js';
import { tombstoneLogRecords } from '../tables/log-records-table.js';
import { nextVersion } from '../model/version.js';
import { tombstoneSpans, selectSpanDetail, selectTraceTree } from '../tables/spans-table.js';
import { selectTraceExists, selectTraceWithSpans, tombstoneTraceSummary } from '../tables/traces-table.js';
import type { StoredSpan, TraceDetail } from '../model/schemas.js';
import type { TraceTree } from '../model/wire/span-tree-schemas.js';
import { toSpanNode, toStoredSpan, toTraceListItem } from './tree.js';

export async function getTrace(clickhouse: ClickHouseClient, workspaceId: string, traceId: string): Promise<TraceDetail> {
  const [row] = await selectTraceWithSpans(clickhouse, { workspaceId, traceId });
  if (!row) throw notFound('Trace', { traceId });
  return { ...toTraceListItem(row.item), spans: row.spans.map(toStoredSpan) };
}

/** The trace with its spans as slim nodes: what a tree and a waterfall draw, no payloads. */
export async function getTraceTree(clickhouse: ClickHouseClient, workspaceId: string, traceId: string): Promise<TraceTree> {
  const row = await selectTraceTree(clickhouse, { workspaceId, traceId });
  if (!row) throw notFound('Trace', { traceId });
  const { spans: _none, ...item } = toTraceListItem(row.item);
  return { ...item, spans: row.spans.map(toSpanNode) };
}

/** One span whole, as GET /api/traces/:id returns it; a span of a deleted trace is gone with it. */
export async function getSpan(clickhouse: ClickHouseClient, workspaceId: string, traceId: string, spanId: string): Promise<StoredSpan> {
  const detail = await selectSpanDetail(clickhouse, { workspaceId, traceId, spanId });
  if (detail === undefined) throw notFound('Span', { traceId, spanId });
  return toStoredSpan(detail);
}

/** Deletes the trace's spans and summary, and the GenAI log records that fed its spans (OTLP logs). */
export async function deleteTrace(clickhouse: ClickHouseClient, workspaceId: string, traceId: string) {
  if ((await selectTraceExists(clickhouse, { workspaceId, traceId })).length === 0) throw notFound('Trace', { traceId });
  // Tombstones of one version for the spans, the summary (spans-table.ts, traces-table.ts) and the log records.
  const version = nextVersion().toString();
  await tombstoneSpans(clickhouse, { workspaceId, traceId, version });
  await tombstoneTraceSummary(clickhouse, { workspaceId, traceId, version });
  await tombstoneLogRecords(clickhouse, workspaceId, traceId, version);
  return { traceId, deleted: true as const };
}
