import type postgres from 'postgres';

/**
 * How the monitors feature reads figures of a workspace's traces and hands out its webhook
 * events without importing the traces or prompts features: the traces feature implements the
 * reader (src/traces/tables/monitor-metrics-table.ts), the prompts feature the outbox
 * (src/prompts/tables/webhook-outbox-table.ts), and the app wires both (src/app.ts, src/server.ts).
 */

export const monitorMetrics = ['cost', 'error_rate', 'latency_p95', 'trace_count', 'score_mean', 'unpriced_spans'] as const;
export type MonitorMetric = (typeof monitorMetrics)[number];

/** Trace-level filters; each absent one matches every trace. */
export interface MonitorFilters {
  environment?: string | undefined;
  model?: string | undefined;
  name?: string | undefined;
  tag?: string | undefined;
  userId?: string | undefined;
}

export interface MetricQuery {
  workspaceId: string;
  metric: MonitorMetric;
  /** The score name of `score_mean`. */
  scoreName?: string | undefined;
  filters: MonitorFilters;
  /** The window: traces starting at or after `from` and before `to`. */
  from: Date;
  to: Date;
}

export interface MonitorMetricReader {
  /** The metric over the window; null when there is nothing to measure (no traces, no scores). */
  measure(query: MetricQuery): Promise<number | null>;
}

export const monitorEventTypes = ['monitor.firing', 'monitor.resolved'] as const;
export type MonitorEventType = (typeof monitorEventTypes)[number];

/** Writes a webhook event and its deliveries inside the caller's transaction (the outbox). */
export type EnqueueMonitorEvent = (
  tx: postgres.TransactionSql,
  workspaceId: string,
  type: MonitorEventType,
  data: Record<string, unknown>,
) => Promise<void>;
