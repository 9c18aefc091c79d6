import type { Analytics } from '../api/types';
import { formatDuration } from '../lib/timeline';
import { formatInt, formatPercent, formatUsd } from '../lib/format';

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
