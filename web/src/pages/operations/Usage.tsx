import { useQuery } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { Retention } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { Clipped } from '../../components/Clipped';
import { formatInt, formatTime } from '../../lib/format';

const daysText = (days: number | null) => (days === null ? 'forever' : `${formatInt(days)} days`);

function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** The workspace's retention, read only: only the operator's admin token may change it. */
function RetentionCard({ retention }: { retention: Retention }) {
  const environments = Object.entries(retention.environments).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section className="card" aria-labelledby="retention-title">
      <h2 id="retention-title">Retention</h2>
      <dl className="kpis kpis-compact" aria-label="Retention">
        <div>
          <dt>Kept (every environment not named)</dt>
          <dd data-effective-days>{daysText(retention.effectiveDays)}</dd>
        </div>
        <div>
          <dt>Workspace setting</dt>
          <dd>{retention.retentionDays === null ? 'inherits' : daysText(retention.retentionDays)}</dd>
        </div>
        <div>
          <dt>Deployment default</dt>
          <dd>{daysText(retention.deploymentDays)}</dd>
        </div>
      </dl>
      {environments.length > 0 && (
        <div className="table-wrap">
          <table className="table" aria-label="Retention by environment">
            <thead>
              <tr>
                <th scope="col">Environment</th>
                <th scope="col">Kept</th>
              </tr>
            </thead>
            <tbody>
              {environments.map(([environment, days]) => (
                <tr key={environment} data-environment={environment}>
                  <td>
                    <Clipped text={environment} inCell />
                  </td>
                  <td>{daysText(days)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="muted small">
        Read only here: the service's operator sets retention with the admin token (
        <code>PUT /api/admin/workspaces/{retention.workspaceId}/retention</code>). Prompts are never expired.
      </p>
    </section>
  );
}

/** Settings → Usage: traces and spans a day, storage used, oldest data kept, and retention. */
export function UsagePage() {
  const usage = useQuery({
    queryKey: ['usage'],
    queryFn: () => call(api.GET('/api/usage')),
    select: (b) => b.data,
  });
  if (usage.isPending) return <Loading label="Loading usage…" />;
  if (usage.isError) return <ErrorState error={usage.error} retry={() => usage.refetch()} />;
  const u = usage.data;
  const days = [...u.days].sort((a, b) => b.day.localeCompare(a.day));
  const most = Math.max(1, ...days.map((d) => d.spans));
  const total = days.reduce((sum, d) => ({ traces: sum.traces + d.traces, spans: sum.spans + d.spans }), { traces: 0, spans: 0 });
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Usage and retention</h1>
          <p className="muted">What this workspace stores, and how long it is kept.</p>
        </div>
      </header>
      <dl className="kpis" aria-label="Usage">
        <div>
          <dt>Traces, last 30 days</dt>
          <dd data-usage="traces">{formatInt(total.traces)}</dd>
        </div>
        <div>
          <dt>Spans, last 30 days</dt>
          <dd data-usage="spans">{formatInt(total.spans)}</dd>
        </div>
        <div>
          <dt>Storage on disk (estimate)</dt>
          <dd data-usage="storage" title={`${formatInt(u.storage.bytesOnDisk)} bytes in ${formatInt(u.storage.rows)} rows`}>
            {formatBytes(u.storage.bytesOnDisk)}
          </dd>
        </div>
        <div>
          <dt>Oldest data kept</dt>
          <dd data-usage="oldest" className="small">
            {u.oldestDataAt ? formatTime(u.oldestDataAt) : '—'}
          </dd>
        </div>
      </dl>
      <RetentionCard retention={u.retention} />
      <section className="card" aria-labelledby="days-title">
        <h2 id="days-title">By day (UTC)</h2>
        {days.length === 0 ? (
          <p className="muted">No traces in the last 30 days.</p>
        ) : (
          <div className="table-wrap">
            <table className="table" aria-label="Traces and spans a day">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col" className="num">
                    Traces
                  </th>
                  <th scope="col" className="num">
                    Spans
                  </th>
                  <th scope="col">
                    <span className="sr-only">Share</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {days.map((d) => (
                  <tr key={d.day} data-day={d.day}>
                    <td>{d.day}</td>
                    <td className="num">{formatInt(d.traces)}</td>
                    <td className="num">{formatInt(d.spans)}</td>
                    <td className="col-bar">
                      <div className="meter" aria-hidden="true">
                        <span style={{ width: `${(100 * d.spans) / most}%` }} />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <p className="muted small">{u.description}</p>
      </section>
    </div>
  );
}
