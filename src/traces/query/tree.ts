import type { StoredSpan, TraceListItem } from '../model/schemas.js';
import type { SpanNodeTuple } from '../tables/spans-table.js';
import type { SpanNode } from '../model/wire/span-tree-schemas.js';

/**
 * Stored read models back to wire shapes. `spans.detail` and `traces.item` hold the JSON the
 * API returns (ingest/ingest.ts storedSpanOf, summaries/summary.ts), so reading is a parse. A span
 * tree is returned flat: every span of the trace in start order, each with its
 * `parentSpanId` (absent for a root), exactly as it was sent.
 */

export const toStoredSpan = (detail: string): StoredSpan => JSON.parse(detail) as StoredSpan;

const usageFields = [
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'reasoningTokens',
  'costUsd',
] as const;

/**
 * A summary's list item. Items written before migration 0004 lack the service, user and tags
 * of the trace: they read as the item of a trace that sent none. Usage sums of values stored
 * before the span bounds existed may have overflowed in the engine, which writes them as
 * null: such a sum reads as the largest number a 64-bit float holds (analytics/stats.ts finiteSum), so
 * no stored value can break a read.
 */
export const toTraceListItem = (item: string): TraceListItem => {
  const parsed = JSON.parse(item) as Record<string, unknown>;
  for (const field of usageFields) {
    if (field in parsed && (typeof parsed[field] !== 'number' || !Number.isFinite(parsed[field]))) parsed[field] = Number.MAX_VALUE;
  }
  if (parsed.durationMs !== null && typeof parsed.durationMs !== 'number') parsed.durationMs = null;
  if (parsed.tags !== undefined) return parsed as unknown as TraceListItem;
  const { traceId, name, sessionId, source, environment, ...rest } = parsed;
  return { traceId, name, sessionId, source, environment, service: null, userId: null, tags: [], ...rest } as unknown as TraceListItem;
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

/**
 * A span's tree fields (tables/spans-table.ts, `selectTraceTree`) as a node: the fields of its `detail` other
 * than the heavy ones, in the same order, each present exactly when it was stored (a string
 * column '' and a number column NULL both mean "not sent"). Assigned one by one: a large
 * trace has 10,000 of them.
 */
export function toSpanNode(t: SpanNodeTuple): SpanNode {
  const [spanId, parentSpanId, name, kind, status, startTime, endTime, durationMs, model, provider, ...rest] = t;
  const [inputTokens, outputTokens, totalTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens, costUsd, ...last] = rest;
  const [costSource, ttftMs, promptName, promptVersion] = last;
  const node: { -readonly [K in keyof SpanNode]: SpanNode[K] } = { spanId } as SpanNode;
  if (parentSpanId !== '') node.parentSpanId = parentSpanId;
  node.name = name;
  node.kind = kind;
  node.startTime = startTime;
  node.endTime = endTime;
  node.durationMs = durationMs;
  if (model !== '') node.model = model;
  if (provider !== '') node.provider = provider;
  if (inputTokens !== null) node.inputTokens = inputTokens;
  if (outputTokens !== null) node.outputTokens = outputTokens;
  if (totalTokens !== null) node.totalTokens = totalTokens;
  if (cacheReadTokens !== null) node.cacheReadTokens = cacheReadTokens;
  if (cacheWriteTokens !== null) node.cacheWriteTokens = cacheWriteTokens;
  if (reasoningTokens !== null) node.reasoningTokens = reasoningTokens;
  if (costUsd !== null) node.costUsd = costUsd;
  if (costSource !== '') node.costSource = costSource;
  if (ttftMs !== null) node.ttftMs = ttftMs;
  node.status = status;
  if (promptName !== '') node.promptName = promptName;
  if (promptVersion !== '') node.promptVersion = promptVersion;
  return node;
}
