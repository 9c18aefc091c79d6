import type { Analytics } from '../../api/types';
import { formatDuration } from '../../lib/timeline';
import { formatInt, formatPercent, formatUsd } from '../../lib/format';

/** The window's key figures, in the order they are shown; `alert` draws one in the error colour. */
function figures(a: Analytics): { label: string; kpi: string; value: string; alert?: boolean }[] {
  return [
    { label: 'Traces', kpi: 'traces', value: formatInt(a.totals.traceCount) },
    { label: 'Error rate', kpi: 'errorRate', value: formatPercent(a.totals.errorRate), alert: a.totals.errorRate > 0 },
    { label: 'Cost', kpi: 'cost', value: formatUsd(a.totals.costUsd) },
    { label: 'Tokens', kpi: 'tokens', value: formatInt(a.totals.totalTokens) },
    { label: 'p50 latency', kpi: 'p50', value: formatDuration(a.latencyMs.p50) },
    { label: 'p95 latency', kpi: 'p95', value: formatDuration(a.latencyMs.p95) },
    { label: 'Cost per trace', kpi: 'costPerTrace', value: formatUsd(a.costEfficiency.costPerTrace) },
  ];
}

/** The window's key figures and its budget: what is spent, left and projected. */
export function DashboardFigures({
  analytics: a,
  budget,
  setBudget,
}: {
  analytics: Analytics;
  budget: string;
  setBudget: (value: string) => void;
}) {
  return (
    <>
      <dl className="kpis" aria-label="Key figures">
        {figures(a).map((f) => (
          <div key={f.kpi}>
            <dt>{f.label}</dt>
            <dd data-kpi={f.kpi} className={f.alert ? 'text-error' : undefined}>
              {f.value}
            </dd>
          </div>
        ))}
      </dl>
      <section className="card budget" aria-label="Budget">
        <label className="field inline">
          <span>Budget (USD)</span>
          <input
            type="number"
            min="0"
            step="any"
            defaultValue={budget}
            onBlur={(e) => setBudget(e.target.value)}
            onKeyDown={(e) => e.key === 'Enter' && setBudget((e.target as HTMLInputElement).value)}
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
              <span style={{ width: `${Math.min(100, (a.budget.utilization ?? 0) * 100)}%` }} className={a.budget.exceeded ? 'over' : ''} />
            </div>
          </div>
        ) : (
          <span className="muted small">Set a budget to see what is left of it and where the window's spend is heading.</span>
        )}
      </section>
    </>
  );
}
