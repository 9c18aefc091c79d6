import type { ClickHouseClient } from '../stores/clickhouse.js';
import { notFound } from '../http/errors.js';
import { findTraceWithSpans, tombstoneTrace, traceExists } from './queries.js';
import type { TraceDetail } from './schemas.js';
import { toStoredSpan, toTraceListItem } from './tree.js';

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
