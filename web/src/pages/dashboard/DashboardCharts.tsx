import { useMemo } from 'react';
import type { Analytics, Stats, StatsGroupBy } from '../../api/types';
import { Chart, type ChartOption } from '../../components/Chart';
import { formatDuration } from '../../lib/timeline';
import { formatCompact, formatPercent, formatUsd } from '../../lib/format';

export const palette = ['#6366f1', '#0ea5e9', '#10b981', '#f59e0b', '#ef4444', '#8b5cf6', '#14b8a6', '#64748b'];

function breakdown(items: Analytics['costBreakdown']['byModel'], label: string): ChartOption {
  const sorted = [...items].sort((a, b) => a.costUsd - b.costUsd);
  return {
    tooltip: { trigger: 'item', renderMode: 'richText' },
    grid: { left: 110, right: 24, top: 8, bottom: 24 },
    xAxis: { type: 'value', axisLabel: { formatter: (v: number) => formatUsd(v) } },
    yAxis: { type: 'category', data: sorted.map((i) => i.key ?? '(none)') },
    series: [{ name: label, type: 'bar', data: sorted.map((i) => i.costUsd), itemStyle: { color: palette[0] }, barMaxWidth: 18 }],
  };
}

type Breakdown = Analytics['costBreakdown'];
const breakdowns: { title: string; label: string; of: (b: Breakdown) => Breakdown['byModel'] }[] = [
  { title: 'Cost by model', label: 'Cost by model', of: (b) => b.byModel },
  { title: 'Cost by provider', label: 'Cost by provider', of: (b) => b.byProvider },
  { title: 'Cost by kind', label: 'Cost by span kind', of: (b) => b.byKind },
];

/**
 * One chart in a card under its title (the chart's accessible label unless `label` is given);
 * the title alone while its data loads.
 */
export function ChartCard({
  title,
  label = title,
  option,
  height,
}: {
  title: string;
  label?: string;
  option: ChartOption | null;
  height?: number;
}) {
  return (
    <section className="card">
      <h2>{title}</h2>
      {option && <Chart option={option} label={label} height={height} />}
    </section>
  );
}

/** The dashboard's charts: the window's cost, tokens and latency, its cost breakdowns and error rates. */
export function DashboardCharts({
  analytics: a,
  groups,
  groupBy,
}: {
  analytics: Analytics;
  groups: Stats['groups'] | undefined;
  groupBy: StatsGroupBy;
}) {
  const overTime = useMemo<ChartOption>(() => {
    const points = a.tokenUsageOverTime.points;
    return {
      legend: { top: 0 },
      xAxis: { type: 'time' },
      yAxis: [
        { type: 'value', name: 'USD', axisLabel: { formatter: (v: number) => formatUsd(v) } },
        { type: 'value', name: 'tokens', axisLabel: { formatter: (v: number) => formatCompact(v) } },
      ],
      series: [
        {
          name: 'Cost',
          type: 'line',
          showSymbol: points.length < 40,
          data: points.map((p) => [p.bucket, p.costUsd]),
          itemStyle: { color: palette[0] },
        },
        {
          name: 'Tokens',
          type: 'bar',
          yAxisIndex: 1,
          data: points.map((p) => [p.bucket, p.totalTokens]),
          itemStyle: { color: '#c7d2fe' },
          barMaxWidth: 24,
        },
      ],
    };
  }, [a]);
  const latency = useMemo<ChartOption>(() => {
    const keys = ['avg', 'p50', 'p90', 'p95', 'p99'] as const;
    return {
      xAxis: { type: 'category', data: keys.map((k) => k) },
      yAxis: { type: 'value', axisLabel: { formatter: (v: number) => formatDuration(v) } },
      series: [
        { name: 'Latency', type: 'bar', data: keys.map((k) => a.latencyMs[k] ?? 0), itemStyle: { color: palette[1] }, barMaxWidth: 36 },
      ],
    };
  }, [a]);
  const errors = useMemo<ChartOption | null>(() => {
    if (!groups) return null;
    return {
      xAxis: { type: 'category', data: groups.map((g) => g.key ?? '(none)') },
      yAxis: { type: 'value', max: 1, axisLabel: { formatter: (v: number) => formatPercent(v, 0) } },
      series: [
        {
          name: 'Error rate',
          type: 'bar',
          data: groups.map((g) => (g.spanCount ? g.errorCount / g.spanCount : 0)),
          itemStyle: { color: palette[4] },
          barMaxWidth: 36,
        },
      ],
    };
  }, [groups]);

  return (
    <div className="grid-2">
      <ChartCard title="Cost and tokens over time" option={overTime} />
      <ChartCard title="Latency percentiles" option={latency} />
      {breakdowns.map(({ title, label, of }) => (
        <ChartCard key={title} title={title} label={label} option={breakdown(of(a.costBreakdown), title)} height={200} />
      ))}
      <ChartCard title={`Span error rate by ${groupBy}`} label={`Error rate by ${groupBy}`} option={errors} height={200} />
    </div>
  );
}
