import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { MetricQuery, MonitorFilters, MonitorMetric, MonitorMetricReader } from '../../contract/monitor-metrics.js';

/**
 * The SQL of monitor metrics (src/monitors/): one figure of a workspace's traces over a window.
 * Trace summaries are read with FINAL and `is_deleted = 0` (one live row per trace), bounded by
 * the workspace (the key's first column) and the window on `start_time`; filters apply after
 * deduplication. A score's mean reads `scores` (clickhouse/0013) deduplicated by id.
 */

/** The aggregate over the window's live trace summaries; sums and counts are 0 without traces, the others null. */
const traceAggregates: Record<Exclude<MonitorMetric, 'score_mean'>, string> = {
  cost: 'toFloat64(sum(ifNull(cost_usd, 0)))',
  error_rate: "if(count() = 0, NULL, countIf(status = 'error') / count())",
  latency_p95: 'if(countIf(duration_ms IS NOT NULL) = 0, NULL, quantileExactIf(0.95)(duration_ms, duration_ms IS NOT NULL))',
  trace_count: 'toFloat64(count())',
  unpriced_spans: 'toFloat64(sum(unpriced_spans))',
};

/** The filters as conditions on `traces` columns, every value a parameter. */
function filterConditions(filters: MonitorFilters): string {
  const conditions: string[] = [];
  if (filters.environment !== undefined) conditions.push('environment = {environment:String}');
  if (filters.model !== undefined) conditions.push('model = {model:String}');
  if (filters.name !== undefined) conditions.push('name = {name:String}');
  if (filters.tag !== undefined) conditions.push('has(tags, {tag:String})');
  if (filters.userId !== undefined) conditions.push('user_id = {userId:String}');
  return conditions.map((c) => ` AND ${c}`).join('');
}

const hasFilters = (filters: MonitorFilters) => Object.values(filters).some((v) => v !== undefined);

function metricSql(query: MetricQuery): string {
  const where = filterConditions(query.filters);
  if (query.metric !== 'score_mean') {
    return `
      SELECT ${traceAggregates[query.metric]} AS value
      FROM traces FINAL
      WHERE workspace_id = {workspaceId:String} AND is_deleted = 0
        AND start_time >= {from:DateTime64(6, 'UTC')} AND start_time < {to:DateTime64(6, 'UTC')}${where}`;
  }
  // A score counts when its trace matches the filters (whenever that trace started).
  const traceFilter = hasFilters(query.filters)
    ? `AND trace_id IN (SELECT trace_id FROM traces FINAL WHERE workspace_id = {workspaceId:String} AND is_deleted = 0${where})`
    : '';
  return `
    SELECT if(count() = 0, NULL, avg(value)) AS value
    FROM (
      SELECT argMax(value, version) AS value, argMax(is_deleted, version) AS deleted, argMax(timestamp, version) AS at
      FROM scores
      WHERE workspace_id = {workspaceId:String} AND name = {scoreName:String} ${traceFilter}
      GROUP BY id)
    WHERE deleted = 0 AND at >= {from:DateTime64(6, 'UTC')} AND at < {to:DateTime64(6, 'UTC')}`;
}

const clickhouseTime = (at: Date) => at.toISOString().replace('T', ' ').replace('Z', '');

export function monitorMetricReader(clickhouse: ClickHouseClient): MonitorMetricReader {
  return {
    async measure(query) {
      const result = await clickhouse.query({
        query: metricSql(query),
        query_params: {
          workspaceId: query.workspaceId,
          scoreName: query.scoreName ?? '',
          from: clickhouseTime(query.from),
          to: clickhouseTime(query.to),
          ...Object.fromEntries(Object.entries(query.filters).filter(([, v]) => v !== undefined)),
        },
        format: 'JSONEachRow',
      });
      const rows = await result.json<{ value: number | string | null }>();
      const value = rows[0]?.value;
      return value === null || value === undefined ? null : Number(value);
    },
  };
}
