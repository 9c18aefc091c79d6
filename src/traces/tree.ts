import { fromStoredTime } from './rows.js';
import type { StoredSpanRow, TraceSummaryRow } from './queries.js';
import type { SpanKind, StoredSpan, TraceListItem } from './schemas.js';

/**
 * Rows back to wire shapes. A span tree is returned flat: every span of the trace in start
 * order, each with its `parentSpanId` (absent for a root), exactly as it was sent.
 */

const parsed = (text: string): unknown => (text === '' ? undefined : JSON.parse(text));

type ModelAndUsageColumns = Pick<StoredSpanRow, 'model' | 'provider' | 'input_tokens' | 'output_tokens' | 'total_tokens' | 'cost_usd'>;

/** Model, provider and usage, each present only when stored ('' and NULL mean "not sent"); spans and summaries alike. */
function modelAndUsage(row: ModelAndUsageColumns) {
  return {
    ...(row.model !== '' && { model: row.model }),
    ...(row.provider !== '' && { provider: row.provider }),
    ...(row.input_tokens !== null && { inputTokens: row.input_tokens }),
    ...(row.output_tokens !== null && { outputTokens: row.output_tokens }),
    ...(row.total_tokens !== null && { totalTokens: row.total_tokens }),
    ...(row.cost_usd !== null && { costUsd: row.cost_usd }),
  };
}

export function toStoredSpan(row: StoredSpanRow): StoredSpan {
  const span: Record<string, unknown> = {
    spanId: row.span_id,
    ...(row.parent_span_id !== '' && { parentSpanId: row.parent_span_id }),
    name: row.name,
    kind: row.kind,
    input: parsed(row.input),
    output: parsed(row.output),
    startTime: fromStoredTime(row.start_time),
    endTime: fromStoredTime(row.end_time),
    durationMs: row.duration_ms,
    ...modelAndUsage(row),
    status: row.status,
    ...(row.status_message !== '' && { statusMessage: row.status_message }),
    attributes: parsed(row.attributes),
    events: parsed(row.events),
    metadata: parsed(row.metadata),
  };
  for (const key of ['input', 'output', 'attributes', 'events', 'metadata']) if (span[key] === undefined) delete span[key];
  return span as StoredSpan;
}

export function toTraceListItem(row: TraceSummaryRow): TraceListItem {
  return {
    traceId: row.trace_id,
    name: row.name === '' ? null : row.name,
    sessionId: row.session_id === '' ? null : row.session_id,
    source: row.source,
    environment: row.environment === '' ? null : row.environment,
    status: row.status,
    traceKind: row.trace_kind === '' ? null : (row.trace_kind as SpanKind),
    startTime: fromStoredTime(row.start_time),
    endTime: row.end_time === null ? null : fromStoredTime(row.end_time),
    durationMs: row.duration_ms,
    ...modelAndUsage(row),
    spanCount: Number(row.span_count),
    errorCount: Number(row.error_count),
  };
}

/** Spans grouped by trace id, each group in the order the rows came (start order). */
export function groupSpansByTrace(rows: (StoredSpanRow & { trace_id: string })[]): Map<string, StoredSpan[]> {
  const groups = new Map<string, StoredSpan[]>();
  for (const row of rows) {
    const group = groups.get(row.trace_id);
    const span = toStoredSpan(row);
    if (group) group.push(span);
    else groups.set(row.trace_id, [span]);
  }
  return groups;
}
