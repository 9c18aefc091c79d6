import { useMemo } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import type { StatsGroupBy } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { fromLocalInput, toLocalInput } from '../../lib/format';
import { DashboardCharts } from './DashboardCharts';
import { DashboardFigures } from './DashboardFigures';
import { DashboardScores } from './DashboardScores';
import { DashboardStats, groupBys } from './DashboardStats';

const ranges: Record<string, { label: string; ms: number }> = {
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
};

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

export function DashboardPage() {
  const [params, setParams] = useSearchParams();
  // The window is computed once per URL, so polling and re-renders ask for the same range: the
  // clock is read on purpose, when the URL changes, not on every render.
  // eslint-disable-next-line react-hooks/purity
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

  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Dashboard</h1>
          <p className="muted">Cost, tokens, latency, errors and scores of this workspace.</p>
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
            <DashboardFigures analytics={a} budget={budget} setBudget={(value) => set({ budget: value })} />
            <DashboardCharts analytics={a} groups={stats.data?.groups} groupBy={groupBy} />
          </>
        )
      )}
      <DashboardScores from={win.startAfter} to={win.startBefore} />
      <DashboardStats stats={stats} groupBy={groupBy} setGroupBy={(value) => set({ groupBy: value })} />
    </div>
  );
}
