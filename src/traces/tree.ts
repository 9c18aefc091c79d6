import type { StoredSpan, TraceListItem } from './schemas.js';

/**
 * Stored read models back to wire shapes. `spans.detail` and `traces.item` hold the JSON the
 * API returns (rows.ts storedSpanOf, summary.ts), so reading is a parse. A span
 * tree is returned flat: every span of the trace in start order, each with its
 * `parentSpanId` (absent for a root), exactly as it was sent.
 */

export const toStoredSpan = (detail: string): StoredSpan => JSON.parse(detail) as StoredSpan;

/**
 * Items written before migration 0004 lack the service, user and tags of the trace: they read
 * as the item of a trace that sent none.
 */
export const toTraceListItem = (item: string): TraceListItem => {
  const parsed = JSON.parse(item) as Partial<TraceListItem>;
  if (parsed.tags !== undefined) return parsed as TraceListItem;
  const { traceId, name, sessionId, source, environment, ...rest } = parsed;
  return { traceId, name, sessionId, source, environment, service: null, userId: null, tags: [], ...rest } as TraceListItem;
};

/** Spans grouped by trace id, each group in the order the rows came (start order). */
export function groupSpansByTrace(rows: Array<{ trace_id: string; detail: string }>): Map<string, StoredSpan[]> {
  const groups = new Map<string, StoredSpan[]>();
  for (const row of rows) {
    const group = groups.get(row.trace_id);
    const span = toStoredSpan(row.detail);
    if (group) group.push(span);
    else groups.set(row.trace_id, [span]);
  }
  return groups;
}
