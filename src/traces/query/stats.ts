import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { StatsGroup, StatsQuery, StatsResult } from '../model/wire/analytics-schemas.js';
import { windowedGroupBys } from '../model/wire/analytics-schemas.js';
import { defaultQueryLimits, limitSettings, resolveWindow, type QueryLimits } from '../model/query-limits.js';
import { selectStats, statsGroupTraces, type AggregateRow, type StatsGrouping } from '../tables/traces-table.js';
import type { TraceScores } from '../../contract/trace-scores.js';
import { finiteOrNull, finiteSum } from '../model/finite.js';

/**
 * GET /api/traces/stats as one aggregate query per call (tables/traces-table.ts, `selectStats`).
 *
 * Groups by model, provider and kind are over spans (a trace counts in every group one of its
 * spans falls in), read from the span groups each trace summary carries; by source over trace
 * summaries, as are service, user, session, name and tag (a trace counts in each of its tags'
 * groups). By score, a trace counts in the group of each score name it (or a span of it) has a
 * live score of. The range is half-open, `from` ≤ trace start < `to`: adjacent ranges never count
 * a trace twice. Each group carries the averages of the scores on its traces (the scores
 * feature's, contract/trace-scores.ts), read in a second statement for the groups answered.
 */

type StatsRow = AggregateRow & { key: string | null };

function toStatsGroup(row: StatsRow): StatsGroup {
  const [p50, p95, p99] = row.latencyPercentiles;
  return {
    key: row.key,
    traceCount: row.traceCount,
    spanCount: row.spanCount,
    errorCount: row.errorCount,
    inputTokens: finiteSum(row.inputTokens),
    outputTokens: finiteSum(row.outputTokens),
    totalTokens: finiteSum(row.totalTokens),
    costUsd: finiteSum(row.costUsd),
    latencyMs: { avg: finiteOrNull(row.latencyAvg), p50: finiteOrNull(p50), p95: finiteOrNull(p95), p99: finiteOrNull(p99) },
    ttftMs: { p50: finiteOrNull(row.ttftPercentiles[0]), p95: finiteOrNull(row.ttftPercentiles[1]) },
  };
}

/**
 * Groups by user, session, tag or name can number as many as the traces: they read a window
 * (default the last 30 days, at most LOUPE_QUERY_MAX_WINDOW_DAYS), reported as from and to.
 * The other groupBys keep their open range (a handful of groups).
 */
export async function getStats(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  asked: StatsQuery,
  limits: QueryLimits = defaultQueryLimits,
  scores?: TraceScores,
): Promise<StatsResult> {
  let query = asked;
  if (windowedGroupBys.has(asked.groupBy)) {
    const window = resolveWindow(asked.from, asked.to, limits, { from: 'from', to: 'to' });
    query = { ...asked, from: window.from, to: window.to };
  }
  const filter = { startFrom: query.from, startBefore: query.to, sessionId: query.sessionId };
  const { groupBy, limit } = query;
  const settings = limitSettings(limits);
  const grouping: StatsGrouping | undefined =
    groupBy === 'model' || groupBy === 'provider' || groupBy === 'kind'
      ? { dimension: groupBy }
      : groupBy === 'score'
        ? scores && { scoreNames: scores.traceNames() }
        : { field: groupBy };
  const rows = grouping ? await selectStats(clickhouse, { workspaceId, filter, limit, grouping }, settings) : [];
  const groups = rows.map(toStatsGroup);
  if (scores && grouping && groups.length > 0) {
    const keys = groups.map((g) => g.key ?? '');
    const averages = await scores.averagesOfGroups(workspaceId, statsGroupTraces(grouping, filter, keys), settings);
    for (const group of groups) group.scores = averages.get(group.key ?? '') ?? {};
  }
  return { groupBy: query.groupBy, from: query.from ?? null, to: query.to ?? null, groups };
}
