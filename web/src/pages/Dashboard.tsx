import { useMemo } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, call } from '../api/client';
import type { Analytics, StatsGroupBy } from '../api/types';
import { Chart, type ChartOption } from '../components/Chart';
import { ErrorState, Loading } from '../components/states';
import { formatDuration } from '../lib/timeline';
import { formatCompact, formatInt, formatPercent, formatUsd, fromLocalInput, toLocalInput } from '../lib/format';

const ranges: Record<string, { label: string; ms: number }> = {
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
};
const groupBys: StatsGroupBy[] = ['model', 'provider', 'kind', 'source', 'user', 'session', 'tag', 'name'];
const palette = ['#6366f1', '#0ea5e9', '#10b981', '#f59e0b', '#ef4444', '#8b5cf6', '#14b8a6', '#64748b'];

/** The window the URL names: a preset (?range=24h, the default) or ?from=&to= (ISO). */
function windowOf(params: URLSearchParams, now: number) {
  const from = params.get('from');
  const to = params.get('to');
  if (from || to)
    return {
      key: 'custom',
      startAfter: from ?? new Date(now - ranges['7d']!.ms).toISOString(),
      startBefore: to ?? new Date(now).toISOString(),
    };
  const key = params.get('range') ?? '24h';
  const range = ranges[key] ?? ranges['24h']!;
  return { key, startAfter: new Date(now - range.ms).toISOString(), startBefore: new Date(now).toISOString() };
}

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

export function DashboardPage() {
  const [params, setParams] = useSearchParams();
  // The window is computed once per URL, so polling and re-renders ask for the same range.
  const win = useMemo(() => windowOf(params, Date.now()), [params]);
  const budget = params.get('budget') ?? '';
  const groupBy = (groupBys as string[]).includes(params.get('groupBy') ?? '') ? (params.get('groupBy') as StatsGroupBy) : 'model';
  const set = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === '') next.delete(k);
      else next.set(k, v);
    }
    setParams(next, { replace: true });
  };

  const analytics = useQuery({
    queryKey: ['analytics', win.startAfter, win.startBefore, budget],
    queryFn: () =>
      call(
        api.GET('/api/traces/analytics', {
          params: { query: { startAfter: win.startAfter, startBefore: win.startBefore, ...(budget ? { budget } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
    select: (b) => b.data,
  });
  const stats = useQuery({
    queryKey: ['stats', groupBy, win.startAfter, win.startBefore],
    queryFn: () => call(api.GET('/api/traces/stats', { params: { query: { groupBy, from: win.startAfter, to: win.startBefore } } })),
    placeholderData: keepPreviousData,
    select: (b) => b.data,
  });

  const a = analytics.data;
  const overTime = useMemo<ChartOption | null>(() => {
    if (!a) return null;
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
  const latency = useMemo<ChartOption | null>(() => {
    if (!a) return null;
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
    const groups = stats.data?.groups;
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
  }, [stats.data]);

  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Dashboard</h1>
          <p className="muted">Cost, tokens, latency and errors of this workspace.</p>
        </div>
        <div className="range-picker" role="group" aria-label="Time range">
          {Object.entries(ranges).map(([key, r]) => (
            <button
              key={key}
              className={`button small${win.key === key ? ' active' : ''}`}
              aria-pressed={win.key === key}
              onClick={() => set({ range: key, from: null, to: null })}
            >
              {r.label}
            </button>
          ))}
          <label className="field inline">
            <span>From</span>
            <input
              type="datetime-local"
              value={toLocalInput(win.startAfter)}
              onChange={(e) => set({ from: fromLocalInput(e.target.value) ?? null, to: win.startBefore, range: null })}
            />
          </label>
          <label className="field inline">
            <span>To</span>
            <input
              type="datetime-local"
              value={toLocalInput(win.startBefore)}
              onChange={(e) => set({ to: fromLocalInput(e.target.value) ?? null, from: win.startAfter, range: null })}
            />
          </label>
        </div>
      </header>
      {analytics.isPending ? (
        <Loading label="Loading analytics…" />
      ) : analytics.isError ? (
        <ErrorState error={analytics.error} retry={() => analytics.refetch()} />
      ) : (
        a && (
          <>
            <dl className="kpis" aria-label="Key figures">
              <div>
                <dt>Traces</dt>
                <dd data-kpi="traces">{formatInt(a.totals.traceCount)}</dd>
              </div>
              <div>
                <dt>Error rate</dt>
                <dd data-kpi="errorRate" className={a.totals.errorRate > 0 ? 'text-error' : undefined}>
                  {formatPercent(a.totals.errorRate)}
                </dd>
              </div>
              <div>
                <dt>Cost</dt>
                <dd data-kpi="cost">{formatUsd(a.totals.costUsd)}</dd>
              </div>
              <div>
                <dt>Tokens</dt>
                <dd data-kpi="tokens">{formatInt(a.totals.totalTokens)}</dd>
              </div>
              <div>
                <dt>p50 latency</dt>
                <dd data-kpi="p50">{formatDuration(a.latencyMs.p50)}</dd>
              </div>
              <div>
                <dt>p95 latency</dt>
                <dd data-kpi="p95">{formatDuration(a.latencyMs.p95)}</dd>
              </div>
              <div>
                <dt>Cost per trace</dt>
                <dd data-kpi="costPerTrace">{formatUsd(a.costEfficiency.costPerTrace)}</dd>
              </div>
            </dl>
            <section className="card budget" aria-label="Budget">
              <label className="field inline">
                <span>Budget (USD)</span>
                <input
                  type="number"
                  min="0"
                  step="any"
                  defaultValue={budget}
                  onBlur={(e) => set({ budget: e.target.value })}
                  onKeyDown={(e) => e.key === 'Enter' && set({ budget: (e.target as HTMLInputElement).value })}
                  placeholder="e.g. 100"
                />
              </label>
              {a.budget ? (
                <div className="budget-figures" data-testid="budget">
                  <span>
                    Spent <strong>{formatUsd(a.budget.spentUsd)}</strong>
                  </span>
                  <span>
                    Remaining <strong>{formatUsd(a.budget.remainingUsd)}</strong>
                  </span>
                  <span>
                    Projected <strong>{formatUsd(a.budget.projectedUsd)}</strong>
                  </span>
                  <span className={`badge ${a.budget.exceeded ? 'status-error' : 'status-completed'}`}>
                    {a.budget.exceeded ? 'exceeded' : 'within budget'}
                  </span>
                  <div className="meter" aria-hidden="true">
                    <span
                      style={{ width: `${Math.min(100, (a.budget.utilization ?? 0) * 100)}%` }}
                      className={a.budget.exceeded ? 'over' : ''}
                    />
                  </div>
                </div>
              ) : (
                <span className="muted small">Set a budget to see what is left of it and where the window's spend is heading.</span>
              )}
            </section>
            <div className="grid-2">
              <section className="card">
                <h2>Cost and tokens over time</h2>
                {overTime && <Chart option={overTime} label="Cost and tokens over time" />}
              </section>
              <section className="card">
                <h2>Latency percentiles</h2>
                {latency && <Chart option={latency} label="Latency percentiles" />}
              </section>
              <section className="card">
                <h2>Cost by model</h2>
                <Chart option={breakdown(a.costBreakdown.byModel, 'Cost by model')} label="Cost by model" height={200} />
              </section>
              <section className="card">
                <h2>Cost by provider</h2>
                <Chart option={breakdown(a.costBreakdown.byProvider, 'Cost by provider')} label="Cost by provider" height={200} />
              </section>
              <section className="card">
                <h2>Cost by kind</h2>
                <Chart option={breakdown(a.costBreakdown.byKind, 'Cost by kind')} label="Cost by span kind" height={200} />
              </section>
              <section className="card">
                <h2>Span error rate by {groupBy}</h2>
                {errors && <Chart option={errors} label={`Error rate by ${groupBy}`} height={200} />}
              </section>
            </div>
          </>
        )
      )}
      <section className="card" aria-label="Stats">
        <div className="card-head">
          <h2>Stats by {groupBy}</h2>
          <label className="field inline">
            <span>Group by</span>
            <select value={groupBy} onChange={(e) => set({ groupBy: e.target.value })}>
              {groupBys.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          </label>
        </div>
        {stats.isError ? (
          <ErrorState error={stats.error} retry={() => stats.refetch()} />
        ) : !stats.data ? (
          <Loading />
        ) : (
          <table className="table" aria-label={`Stats by ${groupBy}`}>
            <thead>
              <tr>
                <th scope="col">{groupBy}</th>
                <th scope="col" className="num">
                  Traces
                </th>
                <th scope="col" className="num">
                  Spans
                </th>
                <th scope="col" className="num">
                  Errors
                </th>
                <th scope="col" className="num">
                  Tokens
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col" className="num">
                  p50
                </th>
                <th scope="col" className="num">
                  p95
                </th>
              </tr>
            </thead>
            <tbody>
              {stats.data.groups.length === 0 && (
                <tr>
                  <td colSpan={8} className="muted center">
                    Nothing in this window.
                  </td>
                </tr>
              )}
              {stats.data.groups.map((g) => (
                <tr key={g.key ?? '(none)'} data-group={g.key ?? ''}>
                  <td>{g.key ?? <span className="muted">(none)</span>}</td>
                  <td className="num">{formatInt(g.traceCount)}</td>
                  <td className="num">{formatInt(g.spanCount)}</td>
                  <td className="num">{formatInt(g.errorCount)}</td>
                  <td className="num">{formatInt(g.totalTokens)}</td>
                  <td className="num">{formatUsd(g.costUsd)}</td>
                  <td className="num">{formatDuration(g.latencyMs.p50)}</td>
                  <td className="num">{formatDuration(g.latencyMs.p95)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
