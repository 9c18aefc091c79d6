import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { recomputeTraceSummaries } from '../summaries/recompute.js';
import { insertSpanRows, type SpanRow } from '../tables/spans-table.js';
import { limitSettings, type QueryLimits } from '../model/query-limits.js';
import { fromStoredTime, toStoredTime } from '../model/stored-time.js';
import { nextVersion } from '../model/version.js';
import { storedSpanSchema, type StoredSpan } from '../model/schemas.js';
import { quoteSpan, type SpanCost } from '../cost/pricing.js';
import type { RepriceResult } from '../model/wire/cost-schemas.js';
import type { WorkspacePriceIndex } from '../cost/workspace-prices.js';

/**
 * POST /api/models/reprice: the generation spans of a range whose cost was not sent (computed,
 * unpriced, or stored before costs were computed) priced again with the prices of now, each
 * at its start time. A span whose cost, source or price changes gets a new row version (the
 * spans table replaces by version), then the touched traces' summaries are recomputed, so
 * every list and aggregate shows the new figures once the call answers. A provided cost is
 * never read here, so never replaced.
 */

const defaultPageSize = 2000;
const tracesPerRecompute = 500;

/** Rows that may be repriced: never a provided cost. Keyset-paged by the sorting key. */
const candidates = `
  SELECT * FROM spans FINAL
  WHERE workspace_id = {workspaceId:String} AND is_deleted = 0
    AND start_time > {startAfter:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')}
    AND startsWith(kind, 'llm.')
    AND (cost_source IN ('computed', 'none') OR (cost_source = '' AND isNull(cost_usd)))
    AND (trace_id, span_id) > ({afterTrace:String}, {afterSpan:String})
  ORDER BY trace_id, span_id
  LIMIT {limit:UInt32}`;

type CandidateRow = SpanRow & { is_deleted: number };

const detailKeys = Object.keys(storedSpanSchema.shape);

/** The stored span with its new cost, keys in the order of the span table (model/wire/span-schemas.ts). */
function withCost(span: StoredSpan, cost: SpanCost): StoredSpan {
  const { costUsd: _c, costSource: _s, pricing: _p, ...rest } = span;
  const patched: Record<string, unknown> = { ...rest, ...cost };
  const ordered: Record<string, unknown> = {};
  for (const key of detailKeys) if (patched[key] !== undefined) ordered[key] = patched[key];
  return ordered as StoredSpan;
}

const numberOrUndefined = (value: number | null) => (value === null ? undefined : Number(value));

export async function repriceRange(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  prices: WorkspacePriceIndex,
  range: { startAfter: string; startBefore: string },
  pageSize = defaultPageSize,
): Promise<RepriceResult> {
  const result: RepriceResult = { spansExamined: 0, spansUpdated: 0, spansPriced: 0, spansUnpriced: 0, tracesUpdated: 0 };
  const version = nextVersion().toString();
  const touched = new Set<string>();
  let after = { trace: '', span: '' };
  for (;;) {
    const page = await clickhouse.query({
      query: candidates,
      query_params: {
        workspaceId,
        startAfter: toStoredTime(range.startAfter),
        startBefore: toStoredTime(range.startBefore),
        afterTrace: after.trace,
        afterSpan: after.span,
        limit: pageSize,
      },
      format: 'JSONEachRow',
    });
    const rows = await page.json<CandidateRow>();
    if (rows.length === 0) break;
    after = { trace: rows.at(-1)!.trace_id, span: rows.at(-1)!.span_id };
    const updated: SpanRow[] = [];
    for (const row of rows) {
      result.spansExamined++;
      const quote = quoteSpan(
        {
          kind: row.kind,
          model: row.model === '' ? undefined : row.model,
          provider: row.provider === '' ? undefined : row.provider,
          inputTokens: numberOrUndefined(row.input_tokens),
          outputTokens: numberOrUndefined(row.output_tokens),
          totalTokens: numberOrUndefined(row.total_tokens),
          cacheReadTokens: numberOrUndefined(row.cache_read_tokens),
          cacheWriteTokens: numberOrUndefined(row.cache_write_tokens),
          reasoningTokens: numberOrUndefined(row.reasoning_tokens),
          startTime: fromStoredTime(row.start_time),
        },
        prices,
      );
      // No model or no token count (a row stored before costs were computed): nothing to price.
      if (quote === undefined) continue;
      const cost: SpanCost =
        quote === null ? { costSource: 'none' } : { costUsd: quote.costUsd, costSource: 'computed', pricing: quote.pricing };
      if (cost.costSource === 'none') result.spansUnpriced++;
      const span = JSON.parse(row.detail) as StoredSpan;
      const unchanged =
        row.cost_source === cost.costSource &&
        (row.cost_usd === null ? undefined : Number(row.cost_usd)) === cost.costUsd &&
        JSON.stringify(span.pricing) === JSON.stringify(cost.pricing);
      if (unchanged) continue;
      if (row.cost_source !== 'computed' && cost.costSource === 'computed') result.spansPriced++;
      const { is_deleted: _deleted, ...columns } = row;
      updated.push({
        ...columns,
        cost_usd: cost.costUsd ?? null,
        cost_source: cost.costSource ?? '',
        detail: JSON.stringify(withCost(span, cost)),
        version,
      });
      touched.add(row.trace_id);
    }
    // Each page's traces are summarized before the next page is read: a call stopped half way
    // (an error, a restart) leaves every rewritten span counted in its trace's figures.
    await insertSpanRows(clickhouse, updated);
    const pageTraces = [...new Set(updated.map((r) => r.trace_id))];
    for (let i = 0; i < pageTraces.length; i += tracesPerRecompute) {
      await recomputeTraceSummaries(clickhouse, workspaceId, pageTraces.slice(i, i + tracesPerRecompute));
    }
    result.spansUpdated += updated.length;
    if (rows.length < pageSize) break;
  }
  result.tracesUpdated = touched.size;
  return result;
}

export interface UnpricedModel {
  model: string;
  provider: string | null;
  spanCount: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  firstSeen: string;
  lastSeen: string;
}

/** Models whose generation spans found no price in the range (by span start), most used first. */
export async function selectUnpricedModels(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  range: { startAfter: string; startBefore: string },
  limits: QueryLimits,
): Promise<UnpricedModel[]> {
  const result = await clickhouse.query({
    query: `
      SELECT model, nullIf(provider, '') AS provider, count() AS spanCount,
        sum(ifNull(input_tokens, 0)) AS inputTokens, sum(ifNull(output_tokens, 0)) AS outputTokens,
        sum(ifNull(total_tokens, ifNull(input_tokens, 0) + ifNull(output_tokens, 0))) AS totalTokens,
        toString(min(start_time)) AS firstSeen, toString(max(start_time)) AS lastSeen
      FROM spans FINAL
      WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 AND cost_source = 'none'
        AND start_time > {startAfter:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')}
      GROUP BY model, provider
      ORDER BY spanCount DESC, totalTokens DESC, model ASC
      LIMIT 1000
      ${limitSettings(limits)}`,
    query_params: { workspaceId, startAfter: toStoredTime(range.startAfter), startBefore: toStoredTime(range.startBefore) },
    format: 'JSONEachRow',
  });
  const rows = await result.json<UnpricedModel>();
  return rows.map((r) => ({
    ...r,
    spanCount: Number(r.spanCount),
    firstSeen: fromStoredTime(r.firstSeen),
    lastSeen: fromStoredTime(r.lastSeen),
  }));
}
