import type { ClickHouseClient } from '../stores/clickhouse.js';
import { notFound } from '../http/errors.js';
import { tombstoneLogRecords } from './otlp/log-records.js';
import { findTraceWithSpans, tombstoneTrace, traceExists } from './queries.js';
import { nextVersion } from './rows.js';
import type { TraceDetail } from './schemas.js';
import { toStoredSpan, toTraceListItem } from './tree.js';

export async function getTrace(clickhouse: ClickHouseClient, workspaceId: string, traceId: string): Promise<TraceDetail> {
  const row = await findTraceWithSpans(clickhouse, workspaceId, traceId);
  if (!row) throw notFound('Trace', { traceId });
  return { ...toTraceListItem(row.item), spans: row.spans.map(toStoredSpan) };
}

/** Deletes the trace's spans and summary, and the GenAI log records that fed its spans (OTLP logs). */
export async function deleteTrace(clickhouse: ClickHouseClient, workspaceId: string, traceId: string) {
  if (!(await traceExists(clickhouse, workspaceId, traceId))) throw notFound('Trace', { traceId });
  await tombstoneTrace(clickhouse, workspaceId, traceId);
  await tombstoneLogRecords(clickhouse, workspaceId, traceId, nextVersion().toString());
  return { traceId, deleted: true as const };
}
