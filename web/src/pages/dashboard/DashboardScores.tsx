import { useMemo } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { ScoreNameAnalytics } from '../../api/types';
import type { ChartOption } from '../../components/Chart';
import { ErrorState } from '../../components/states';
import { Clipped } from '../../components/Clipped';
import { formatDecimal, formatInt, formatPercent, formatTime } from '../../lib/format';
import { ChartCard, palette } from './DashboardCharts';

/** Hourly buckets up to two days, daily beyond. */
const hourlyUpTo = 2 * 86_400_000;

/** A categorical or boolean score's labels, most given first, with their share of its scores. */
function shares(score: ScoreNameAnalytics): { label: string; count: number; share: number }[] {
  return Object.entries(score.distribution ?? {})
    .map(([label, count]) => ({ label, count, share: score.count ? count / score.count : 0 }))
    .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
}

/** Numeric scores: the mean per bucket, a line per score name. */
function overTime(numeric: ScoreNameAnalytics[], from: string, to: string): ChartOption {
  return {
    legend: { top: 0, type: 'scroll' },
    xAxis: { type: 'time', min: from, max: to },
    yAxis: { type: 'value', scale: true, axisLabel: { formatter: (v: number) => formatDecimal(v) } },
    series: numeric.map((s, i) => ({
      name: s.name,
      type: 'line',
      showSymbol: s.overTime.length < 40,
      data: s.overTime.map((p) => [p.bucket, p.mean]),
      itemStyle: { color: palette[i % palette.length] },
    })),
  };
}

/** Categorical and boolean scores: a bar per score name, its labels' shares stacked. */
function distributions(labelled: ScoreNameAnalytics[]): ChartOption {
  const labels = [...new Set(labelled.flatMap((s) => shares(s).map((x) => x.label)))];
  return {
    tooltip: { trigger: 'item', renderMode: 'richText' },
    legend: { top: 0, type: 'scroll' },
    grid: { left: 110, right: 24, top: 32, bottom: 24 },
    xAxis: { type: 'value', max: 1, axisLabel: { formatter: (v: number) => formatPercent(v, 0) } },
    yAxis: { type: 'category', data: labelled.map((s) => s.name) },
    series: labels.map((label, i) => ({
      name: label,
      type: 'bar',
      stack: 'share',
      barMaxWidth: 18,
      itemStyle: { color: palette[i % palette.length] },
      data: labelled.map((s) => shares(s).find((x) => x.label === label)?.share ?? 0),
    })),
  };
}

/** What the over-time chart draws, as a table for screen readers (a canvas says nothing). */
function OverTimeTable({ numeric }: { numeric: ScoreNameAnalytics[] }) {
  return (
    <table className="sr-only" aria-label="Numeric scores over time, as a table">
      <thead>
        <tr>
          <th scope="col">Score</th>
          <th scope="col">From</th>
          <th scope="col">Scores</th>
          <th scope="col">Mean</th>
        </tr>
      </thead>
      <tbody>
        {numeric.flatMap((s) =>
          s.overTime.map((p) => (
            <tr key={`${s.name}-${p.bucket}`} data-score={s.name} data-bucket={p.bucket}>
              <td>{s.name}</td>
              <td>{formatTime(p.bucket)}</td>
              <td data-testid="bucket-count">{formatInt(p.count)}</td>
              <td data-testid="bucket-mean">{formatDecimal(p.mean)}</td>
            </tr>
          )),
        )}
      </tbody>
    </table>
  );
}

/**
 * The window's scores: numeric ones' means over time, categorical and boolean ones'
 * distributions, and per score name the figures the charts draw (count, mean, median, labels).
 */
export function DashboardScores({ from, to }: { from: string; to: string }) {
  const interval = Date.parse(to) - Date.parse(from) <= hourlyUpTo ? 'hour' : 'day';
  const analytics = useQuery({
    queryKey: ['score-analytics', from, to, interval],
    queryFn: () => call(api.GET('/api/scores/analytics', { params: { query: { from, to, interval } } })),
    placeholderData: keepPreviousData,
    select: (b) => b.data.scores,
  });
  const scores = analytics.data;
  const numeric = useMemo(() => (scores ?? []).filter((s) => s.dataType === 'numeric'), [scores]);
  const labelled = useMemo(() => (scores ?? []).filter((s) => s.dataType !== 'numeric'), [scores]);
  const lines = useMemo(() => (numeric.length ? overTime(numeric, from, to) : null), [numeric, from, to]);
  const bars = useMemo(() => (labelled.length ? distributions(labelled) : null), [labelled]);
  if (analytics.isError) return <ErrorState error={analytics.error} retry={() => analytics.refetch()} />;
  if (!scores) return null;
  return (
    <section className="dashboard-scores" aria-labelledby="dashboard-scores-title">
      <h2 id="dashboard-scores-title">Scores</h2>
      {scores.length === 0 ? (
        <p className="muted">No scores in this window.</p>
      ) : (
        <>
          <div className="grid-2">
            {lines && (
              <ChartCard title={`Numeric scores over time (mean per ${interval})`} label="Numeric scores over time" option={lines} />
            )}
            {bars && (
              <ChartCard
                title="Categorical and boolean scores"
                label="Distribution of categorical and boolean scores"
                option={bars}
                height={Math.max(160, 40 + labelled.length * 36)}
              />
            )}
          </div>
          {lines && <OverTimeTable numeric={numeric} />}
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Scores in this window, scrollable">
            <table className="table compact" aria-label="Scores in this window">
              <thead>
                <tr>
                  <th scope="col">Score</th>
                  <th scope="col">Type</th>
                  <th scope="col" className="num">
                    Count
                  </th>
                  <th scope="col" className="num">
                    Mean
                  </th>
                  <th scope="col" className="num">
                    Median
                  </th>
                  <th scope="col">Distribution</th>
                </tr>
              </thead>
              <tbody>
                {scores.map((s) => (
                  <tr key={s.name} data-score={s.name}>
                    <th scope="row">
                      <Clipped text={s.name} inCell />
                    </th>
                    <td>{s.dataType}</td>
                    <td className="num" data-testid="score-count">
                      {formatInt(s.count)}
                    </td>
                    <td className="num" data-testid="score-mean">
                      {s.dataType === 'categorical' ? '—' : formatDecimal(s.mean)}
                    </td>
                    <td className="num" data-testid="score-p50">
                      {formatDecimal(s.p50)}
                    </td>
                    <td data-testid="score-distribution">
                      {s.distribution ? (
                        <Clipped
                          text={shares(s)
                            .map((x) => `${x.label} ${formatInt(x.count)} (${formatPercent(x.share, 0)})`)
                            .join(' · ')}
                          inCell
                        />
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
