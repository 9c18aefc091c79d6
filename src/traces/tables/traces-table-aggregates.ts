import { z } from 'zod';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { traceFilterSchema, traceSummaryFilter, type TraceFilter } from './traces-table.js';
import { workspaceId } from './params.js';

/**
 * Aggregates over the trace summaries (`traces FINAL`, filtered by `traceSummaryFilter`):
 * GET /api/traces/stats (analytics/stats.ts) and GET /api/traces/analytics (analytics/analytics.ts). Every figure
 * is computed in the engine over deduplicated rows.
 *
 * Span-level figures (by model, provider or kind) read the `by_model`, `by_provider` and
 * `by_kind` columns of the summaries (clickhouse/0001): each trace's spans already grouped per
 * dimension at ingest (summary.ts), usage counted by the rule of DESIGN.md (generation spans
 * only, other kinds only in a trace without one). So a span belongs to a range by its trace's
 * start time, like the trace-level figures, and a wide aggregate reads one row per trace.
 *
 * Percentiles are `quantilesExactInclusive`: exact (linear interpolation between the two
 * nearest values, the definition of most spreadsheets and numpy), where the sampling and
 * t-digest variants can miss by more than 1% on small or skewed groups. The engine answers
 * NaN (JSON null) for an average or percentile of nothing, and null for a sum that overflowed
 * (only values stored before the span bounds existed can): rows say so with `nullable`.
 */

const figure = z.number().nullable();

/** The figures of a group of traces (stats groups, analytics totals and buckets). */
const aggregateFigures = {
  traceCount: z.number(),
  spanCount: z.number(),
  errorCount: z.number(),
  inputTokens: figure,
  outputTokens: figure,
  totalTokens: figure,
  costUsd: figure,
  latencyAvg: figure,
  latencyPercentiles: z.array(figure),
  ttftPercentiles: z.array(figure),
};
export const aggregateRow = z.object(aggregateFigures);
export type AggregateRow = z.output<typeof aggregateRow>;

const statsRow = z.object({ key: z.string().nullable(), ...aggregateFigures });
const statsParams = z.object({ workspaceId, filter: traceFilterSchema, limit: z.number().int().min(1) });

export const spanDimensions = ['model', 'provider', 'kind'] as const;
export type Dimension = (typeof spanDimensions)[number];
/** Where each dimension sits in a `traces.ttfts` tuple (clickhouse/0005). */
const ttftIndex: Record<Dimension, number> = { model: 1, provider: 2, kind: 3 };

/** Stats groups of spans by model, provider or kind: each trace's groups of the dimension (traces.by_<dimension>), summed per value. */
export const selectStatsBySpanGroup = defineQuery({
  name: 'selectStatsBySpanGroup',
  params: statsParams.extend({ dimension: z.enum(spanDimensions) }),
  row: statsRow,
  sql: ({ workspaceId, filter, limit, dimension }) => {
    const { where, values } = traceSummaryFilter(filter);
    return {
      values: { ...values, workspaceId, limit },
      query: `
        SELECT nullIf(toString(g.key), '') AS key,
          count() AS traceCount,
          sum(g.spans) AS spanCount,
          sum(g.errors) AS errorCount,
          sum(g.input_tokens) AS inputTokens,
          sum(g.output_tokens) AS outputTokens,
          sum(g.total_tokens) AS totalTokens,
          sum(g.cost_usd) AS costUsd,
          avgArray(g.durations) AS latencyAvg,
          quantilesExactInclusiveArray(0.5, 0.95, 0.99)(g.durations) AS latencyPercentiles,
          quantilesExactInclusiveArray(0.5, 0.95)(
            arrayMap(x -> x.4, arrayFilter(x -> toString(x.${ttftIndex[dimension]}) = toString(g.key), ttfts))) AS ttftPercentiles
        FROM traces FINAL ARRAY JOIN by_${dimension} AS g
        WHERE ${where}
        GROUP BY g.key
        ORDER BY costUsd DESC, traceCount DESC, key ASC NULLS LAST
        LIMIT {limit:UInt32}`,
    };
  },
});

export const traceFields = ['source', 'service', 'user', 'session', 'name', 'tag'] as const;
/** The summary column each trace-level grouping reads; '' (not sent) is the null group. A tag groups per tag of the trace. */
const traceFieldColumns: Record<(typeof traceFields)[number], string> = {
  source: 'source',
  service: 'service',
  user: 'user_id',
  session: 'session_id',
  name: 'name',
  tag: 'tag',
};

/** Counts, sums and the mean latency of a group of traces, over the columns of their summaries (stats and analytics). */
const traceSums = `
  count() AS traceCount,
  sum(span_count) AS spanCount,
  countIf(status = 'error') AS errorCount,
  sum(ifNull(input_tokens, 0)) AS inputTokens,
  sum(ifNull(output_tokens, 0)) AS outputTokens,
  sum(ifNull(total_tokens, 0)) AS totalTokens,
  sum(ifNull(cost_usd, 0)) AS costUsd,
  avg(duration_ms) AS latencyAvg`;

/** The figures of a stats group of traces. */
const traceGroupFigures = `${traceSums},
  quantilesExactInclusive(0.5, 0.95, 0.99)(duration_ms) AS latencyPercentiles,
  quantilesExactInclusiveArray(0.5, 0.95)(arrayMap(x -> x.4, ttfts)) AS ttftPercentiles`;

/** Stats groups of traces by a trace field: the deduplicated summaries, one row per trace (per tag of it, by tag). */
export const selectStatsByTraceField = defineQuery({
  name: 'selectStatsByTraceField',
  params: statsParams.extend({ field: z.enum(traceFields) }),
  row: statsRow,
  sql: ({ workspaceId, filter, limit, field }) => {
    const { where, values } = traceSummaryFilter(filter);
    return {
      values: { ...values, workspaceId, limit },
      query: `
        SELECT nullIf(${traceFieldColumns[field]}, '') AS key, ${traceGroupFigures}
        FROM traces FINAL ${field === 'tag' ? 'LEFT ARRAY JOIN tags AS tag' : ''}
        WHERE ${where}
        GROUP BY key
        ORDER BY costUsd DESC, traceCount DESC, key ASC NULLS LAST
        LIMIT {limit:UInt32}`,
    };
  },
});

const sqlPart = z.object({ sql: z.string(), values: z.record(z.string(), z.unknown()) });

/**
 * Stats groups of traces by score name: each trace in the group of every name it has a live
 * score of (on it or a span), `scoreNames` the scores feature's `(trace_id, key)` subquery
 * (TraceScores.traceNames).
 */
export const selectStatsByScoreName = defineQuery({
  name: 'selectStatsByScoreName',
  params: statsParams.extend({ scoreNames: sqlPart }),
  row: statsRow,
  sql: ({ workspaceId, filter, limit, scoreNames }) => {
    const { where, values } = traceSummaryFilter(filter);
    return {
      values: { ...scoreNames.values, ...values, workspaceId, limit },
      query: `
        SELECT sn.key AS key, ${traceGroupFigures}
        FROM (
          SELECT trace_id, span_count, status, input_tokens, output_tokens, total_tokens, cost_usd, duration_ms, ttfts
          FROM traces FINAL WHERE ${where}) AS t
        INNER JOIN (${scoreNames.sql}) AS sn USING (trace_id)
        GROUP BY key
        ORDER BY costUsd DESC, traceCount DESC, key ASC NULLS LAST
        LIMIT {limit:UInt32}`,
    };
  },
});

/**
 * The traces of some stats groups, as a subquery of `(key, trace_id)` rows (the null group's key
 * ''), a trace once per group it counts in: what the scores feature averages per group
 * (TraceScores.averagesOfGroups). Its parameters are in `values`, `workspaceId` left to the caller.
 */
export type StatsGrouping = { dimension: Dimension } | { field: (typeof traceFields)[number] } | { scoreNames: z.infer<typeof sqlPart> };

export function statsGroupTraces(
  grouping: StatsGrouping,
  filter: TraceFilter,
  keys: string[],
): { sql: string; values: Record<string, unknown> } {
  const { where, values } = traceSummaryFilter(filter);
  const inKeys = 'key IN {groupKeys:Array(String)}';
  const all = { ...values, groupKeys: keys };
  if ('dimension' in grouping) {
    return {
      sql: `SELECT DISTINCT toString(g.key) AS key, trace_id FROM traces FINAL ARRAY JOIN by_${grouping.dimension} AS g WHERE ${where} AND ${inKeys}`,
      values: all,
    };
  }
  if ('field' in grouping) {
    const { field } = grouping;
    return {
      sql: `SELECT DISTINCT ${traceFieldColumns[field]} AS key, trace_id FROM traces FINAL ${field === 'tag' ? 'LEFT ARRAY JOIN tags AS tag' : ''} WHERE ${where} AND ${inKeys}`,
      values: all,
    };
  }
  return {
    sql: `SELECT key, trace_id FROM (${grouping.scoreNames.sql}) WHERE ${inKeys} AND trace_id IN (SELECT trace_id FROM traces FINAL WHERE ${where})`,
    values: { ...grouping.scoreNames.values, ...all },
  };
}

/** An analytics bucket: the start of the hour or day a trace starts in. */
const buckets = { hour: 'toStartOfHour(start_time)', day: 'toStartOfDay(start_time)' } as const;

/**
 * Analytics totals and one row per time bucket in one pass: GROUPING SETS computes the total
 * row (`isTotal = 1`) beside the buckets, so no figure is summed outside the engine. The outer
 * SELECT derives rates, efficiency and the budget block from the same aggregates.
 */
export const selectAnalyticsTotals = defineQuery({
  name: 'selectAnalyticsTotals',
  params: z.object({
    workspaceId,
    filter: traceFilterSchema,
    interval: z.enum(['hour', 'day']),
    budget: z.number().min(0),
    projectionFactor: z.number(),
  }),
  row: z.object({
    ...aggregateFigures,
    isTotal: z.number(),
    bucket: z.number(),
    completedCount: z.number(),
    errorRate: figure,
    costPerTrace: figure,
    costPer1kTokens: figure,
    tokensPerTrace: figure,
    costPerSuccessfulTrace: figure,
    remainingUsd: figure,
    utilization: figure,
    exceeded: z.union([z.boolean(), z.number()]).nullable(),
    projectedUsd: figure,
    costProvided: figure,
    costComputed: figure,
    unpricedSpanCount: z.number(),
  }),
  sql: ({ workspaceId, filter, interval, budget, projectionFactor }) => {
    const { where, values } = traceSummaryFilter(filter);
    return {
      values: { ...values, workspaceId, budget, projectionFactor },
      query: `
        SELECT *,
          if(traceCount = 0, 0, errorCount / traceCount) AS errorRate,
          if(traceCount = 0, NULL, costUsd / traceCount) AS costPerTrace,
          if(totalTokens = 0, NULL, costUsd * 1000 / totalTokens) AS costPer1kTokens,
          if(traceCount = 0, NULL, totalTokens / traceCount) AS tokensPerTrace,
          if(completedCount = 0, NULL, costUsd / completedCount) AS costPerSuccessfulTrace,
          {budget:Float64} - costUsd AS remainingUsd,
          if({budget:Float64} = 0, NULL, costUsd / {budget:Float64}) AS utilization,
          costUsd > {budget:Float64} AS exceeded,
          costUsd * {projectionFactor:Float64} AS projectedUsd
        FROM (
          SELECT grouping(bucket) AS isTotal,
            toUnixTimestamp(${buckets[interval]}) AS bucket, ${traceSums},
            quantilesExactInclusive(0.5, 0.9, 0.95, 0.99)(duration_ms) AS latencyPercentiles,
            quantilesExactInclusiveArray(0.5, 0.95)(arrayMap(x -> x.4, ttfts)) AS ttftPercentiles,
            -- Successful traces: completed without error; running ones are not (yet) successes.
            countIf(status = 'completed') AS completedCount,
            -- How complete the cost is (clickhouse/0006): by source, and the spans without a price.
            sum(cost_provided) AS costProvided,
            sum(cost_computed) AS costComputed,
            sum(unpriced_spans) AS unpricedSpanCount
          FROM traces FINAL
          WHERE ${where}
          GROUP BY GROUPING SETS ((), (bucket))
        )
        ORDER BY isTotal DESC, bucket ASC`,
    };
  },
});

/**
 * Cost per model, provider and kind from the summaries' span groups: one ARRAY JOIN per
 * dimension over its key and cost subcolumns only (never the durations), grouped on the stored
 * LowCardinality keys; shares are each group's part of its dimension's total, computed by a
 * window in the engine.
 */
export const selectCostBreakdown = defineQuery({
  name: 'selectCostBreakdown',
  params: z.object({ workspaceId, filter: traceFilterSchema }),
  row: z.object({ dimension: z.enum(spanDimensions), key: z.string().nullable(), costUsd: figure, share: figure }),
  sql: ({ workspaceId, filter }) => {
    const { where, values } = traceSummaryFilter(filter);
    return {
      values: { ...values, workspaceId },
      query: `
        SELECT dimension, key, costUsd,
          if(sum(costUsd) OVER (PARTITION BY dimension) = 0, 0, costUsd / sum(costUsd) OVER (PARTITION BY dimension)) AS share
        FROM (
          SELECT 'model' AS dimension, nullIf(toString(k), '') AS key, sum(c) AS costUsd
          FROM traces FINAL ARRAY JOIN by_model.key AS k, by_model.cost_usd AS c WHERE ${where} GROUP BY k
          UNION ALL
          SELECT 'provider' AS dimension, nullIf(toString(k), '') AS key, sum(c) AS costUsd
          FROM traces FINAL ARRAY JOIN by_provider.key AS k, by_provider.cost_usd AS c WHERE ${where} GROUP BY k
          UNION ALL
          SELECT 'kind' AS dimension, nullIf(toString(k), '') AS key, sum(c) AS costUsd
          FROM traces FINAL ARRAY JOIN by_kind.key AS k, by_kind.cost_usd AS c WHERE ${where} GROUP BY k
        )
        ORDER BY dimension, costUsd DESC, key ASC NULLS LAST`,
    };
  },
});
