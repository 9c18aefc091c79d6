import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import type { Monitor, NewMonitor } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { Clipped, ClippedLink } from '../../components/Clipped';
import { ItemDetail } from '../../components/ItemDetail';
import { Loaded } from '../../components/Loaded';
import { formatInt, formatPercent, formatRelative, formatTime, formatUsd } from '../../lib/format';
import { formText } from '../../lib/form';
import { pathSegment } from '../../lib/paths';
import { scoreNameChoices, scoreNamesLookbackMs } from '../../lib/score-names';
import { useScoreConfigs } from '../quality/Scores';

const monitorPath = (id: string) => `/monitors/${pathSegment(id)}`;

const metrics: { metric: Monitor['metric']; label: string }[] = [
  { metric: 'cost', label: 'Cost (USD)' },
  { metric: 'error_rate', label: 'Error rate' },
  { metric: 'latency_p95', label: 'Latency p95 (ms)' },
  { metric: 'trace_count', label: 'Trace count' },
  { metric: 'score_mean', label: "A score's mean" },
  { metric: 'unpriced_spans', label: 'Unpriced spans' },
];
const metricLabel = (metric: Monitor['metric']) => metrics.find((m) => m.metric === metric)?.label ?? metric;
const filterKeys = ['environment', 'model', 'name', 'tag', 'userId'] as const;

function formatMetric(metric: Monitor['metric'], value: number | null): string {
  if (value === null) return '—';
  if (metric === 'cost') return formatUsd(value);
  if (metric === 'error_rate') return formatPercent(value);
  if (metric === 'latency_p95') return `${formatInt(Math.round(value))} ms`;
  if (metric === 'score_mean') return value.toFixed(3);
  return formatInt(value);
}

function describeCondition(m: Pick<Monitor, 'metric' | 'condition'>): string {
  const c = m.condition;
  const way = c.direction === 'above' ? 'above' : 'below';
  return c.kind === 'threshold'
    ? `${way} ${formatMetric(m.metric, c.value)}`
    : `${c.direction === 'above' ? 'rises' : 'falls'} ${c.percent}% against the window before`;
}

function describeWindow(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  return `${Math.round(seconds / 60)} min`;
}

const StateBadge = ({ state }: { state: Monitor['state'] }) => (
  <span className={`badge status-${state === 'firing' ? 'error' : 'ok'}`} data-state={state}>
    {state}
  </span>
);

/** The workspace's score names for the form's picker (score-names.ts), read once the metric is a score's. */
function useScoreNames(enabled: boolean, current: string | undefined): string[] {
  const configs = useScoreConfigs();
  const [from] = useState(() => new Date(Date.now() - scoreNamesLookbackMs).toISOString());
  const seen = useQuery({
    queryKey: ['score-analytics-names', from],
    queryFn: () => call(api.GET('/api/scores/analytics', { params: { query: { from, interval: 'day' } } })),
    select: (body) => body.data.scores,
    enabled,
  });
  return scoreNameChoices(configs.data, seen.data, current);
}

function MonitorForm({ monitor, onSaved }: { monitor?: Monitor; onSaved: (saved: Monitor) => void }) {
  const [metric, setMetric] = useState<Monitor['metric']>(monitor?.metric ?? 'cost');
  const [kind, setKind] = useState<Monitor['condition']['kind']>(monitor?.condition.kind ?? 'threshold');
  const scoreNames = useScoreNames(metric === 'score_mean', monitor?.scoreName ?? undefined);
  const save = useMutation({
    mutationFn: (body: NewMonitor) =>
      monitor
        ? call(api.PUT('/api/monitors/{id}', { params: { path: { id: monitor.id } }, body }))
        : call(api.POST('/api/monitors/', { body })),
    onSuccess: (saved) => onSaved(saved.data),
  });
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = formText(event.currentTarget);
    const direction = text('direction') === 'below' ? 'below' : 'above';
    const filters: NewMonitor['filters'] = Object.fromEntries(
      filterKeys.map((k): [string, string] => [k, text(`filter-${k}`)]).filter(([, v]) => v !== ''),
    );
    save.mutate({
      name: text('name'),
      metric,
      ...(metric === 'score_mean' ? { scoreName: text('scoreName') } : {}),
      windowSeconds: Math.round(Number(text('windowMinutes')) * 60),
      filters,
      condition:
        kind === 'threshold' ? { kind, direction, value: Number(text('value')) } : { kind, direction, percent: Number(text('percent')) },
      enabled: (event.currentTarget.elements.namedItem('enabled') as HTMLInputElement).checked,
    });
  }
  const c = monitor?.condition;
  return (
    <form className="card form" onSubmit={submit} aria-label={monitor ? 'Edit monitor' : 'New monitor'}>
      <div className="filters">
        <label className="field">
          <span>Name</span>
          <input name="name" required maxLength={200} defaultValue={monitor?.name} />
        </label>
        <label className="field">
          <span>Metric</span>
          <select name="metric" value={metric} onChange={(e) => setMetric(e.target.value as Monitor['metric'])}>
            {metrics.map((m) => (
              <option key={m.metric} value={m.metric}>
                {m.label}
              </option>
            ))}
          </select>
        </label>
        {metric === 'score_mean' && (
          <label className="field">
            <span>Score name</span>
            <input name="scoreName" list="monitor-score-names" required maxLength={200} defaultValue={monitor?.scoreName ?? ''} />
            <datalist id="monitor-score-names">
              {scoreNames.map((name) => (
                <option key={name} value={name} />
              ))}
            </datalist>
          </label>
        )}
        <label className="field">
          <span>Window (minutes)</span>
          <input
            name="windowMinutes"
            type="number"
            min={1}
            max={43200}
            step="any"
            required
            defaultValue={monitor ? monitor.windowSeconds / 60 : 60}
          />
        </label>
        <label className="field">
          <span>Condition</span>
          <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as Monitor['condition']['kind'])}>
            <option value="threshold">threshold</option>
            <option value="change">change against the window before</option>
          </select>
        </label>
        <label className="field">
          <span>Direction</span>
          <select name="direction" defaultValue={c?.direction ?? 'above'}>
            <option value="above">{kind === 'threshold' ? 'above' : 'rises'}</option>
            <option value="below">{kind === 'threshold' ? 'below' : 'falls'}</option>
          </select>
        </label>
        {kind === 'threshold' ? (
          <label className="field">
            <span>Threshold value</span>
            <input name="value" type="number" step="any" required defaultValue={c?.kind === 'threshold' ? c.value : undefined} />
          </label>
        ) : (
          <label className="field">
            <span>Change (%)</span>
            <input name="percent" type="number" step="any" min={0} required defaultValue={c?.kind === 'change' ? c.percent : undefined} />
          </label>
        )}
      </div>
      <fieldset className="filters" aria-label="Filters">
        <legend>Only traces with (optional)</legend>
        {filterKeys.map((k) => (
          <label className="field" key={k}>
            <span>{k === 'name' ? 'Trace name' : k === 'userId' ? 'User' : k[0]!.toUpperCase() + k.slice(1)}</span>
            <input name={`filter-${k}`} maxLength={200} defaultValue={monitor?.filters[k] ?? ''} />
          </label>
        ))}
      </fieldset>
      <div className="form-actions">
        <label className="toggle">
          <input name="enabled" type="checkbox" defaultChecked={monitor?.enabled ?? true} />
          <span>Enabled</span>
        </label>
        <button className="button primary" type="submit" disabled={save.isPending}>
          {monitor ? 'Save monitor' : 'Create monitor'}
        </button>
      </div>
      {save.isError && <ErrorState error={save.error} />}
    </form>
  );
}

/** Monitors: alerts on the workspace's cost, errors, latency, volume and scores. */
export function MonitorsPage() {
  const navigate = useNavigate();
  const [formOpen, setFormOpen] = useState(false);
  const monitors = useQuery({
    queryKey: ['monitors'],
    queryFn: () => call(api.GET('/api/monitors/')),
    select: (b) => b.data,
    refetchInterval: 30_000,
  });
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Monitors</h1>
          <p className="muted">Checked on a schedule by the service; firing and resolution also go out as webhook events.</p>
        </div>
        <button className="button primary" onClick={() => setFormOpen((o) => !o)} aria-expanded={formOpen}>
          {formOpen ? 'Close' : 'New monitor'}
        </button>
      </header>
      {formOpen && <MonitorForm onSaved={(saved) => void navigate(monitorPath(saved.id))} />}
      <Loaded query={monitors} loading="Loading monitors…" empty={<>No monitors yet.</>}>
        {(items) => (
          <div className="table-wrap">
            <table className="table" aria-label="Monitors">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">State</th>
                  <th scope="col">Metric</th>
                  <th scope="col">Fires when</th>
                  <th scope="col">Window</th>
                  <th scope="col" className="num">
                    Last value
                  </th>
                  <th scope="col">Checked</th>
                </tr>
              </thead>
              <tbody>
                {items.map((m) => (
                  <tr key={m.id} data-monitor={m.name} className={m.enabled ? undefined : 'muted'}>
                    <td>
                      <ClippedLink to={monitorPath(m.id)} text={m.name} inCell /> {!m.enabled && <span className="badge">disabled</span>}
                    </td>
                    <td>
                      <StateBadge state={m.state} />
                    </td>
                    <td>{m.metric === 'score_mean' ? `mean of ${m.scoreName ?? ''}` : metricLabel(m.metric)}</td>
                    <td>{describeCondition(m)}</td>
                    <td>{describeWindow(m.windowSeconds)}</td>
                    <td className="num">{formatMetric(m.metric, m.lastValue)}</td>
                    <td className="muted small">{m.lastEvaluatedAt ? formatRelative(m.lastEvaluatedAt) : 'not yet'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
    </div>
  );
}

function History({ monitor }: { monitor: Monitor }) {
  const history = useQuery({
    queryKey: ['monitors', monitor.id, 'history'],
    queryFn: () => call(api.GET('/api/monitors/{id}/history', { params: { path: { id: monitor.id }, query: { limit: 50 } } })),
    select: (b) => b.data,
  });
  return (
    <section className="card" aria-labelledby="history-title">
      <h2 id="history-title">Episodes</h2>
      <Loaded query={history} loading="Loading the history…" empty={<>It has never fired.</>}>
        {(items) => (
          <div className="table-wrap">
            <table className="table" aria-label="Episodes">
              <thead>
                <tr>
                  <th scope="col">Fired</th>
                  <th scope="col" className="num">
                    Value
                  </th>
                  <th scope="col">Resolved</th>
                  <th scope="col" className="num">
                    Value
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((ep) => (
                  <tr key={ep.id} data-episode={ep.id}>
                    <td>{formatTime(ep.firedAt)}</td>
                    <td className="num">{formatMetric(monitor.metric, ep.firedValue)}</td>
                    <td>{ep.resolvedAt ? formatTime(ep.resolvedAt) : <StateBadge state="firing" />}</td>
                    <td className="num">{formatMetric(monitor.metric, ep.resolvedValue)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
    </section>
  );
}

/** One monitor: its state, definition (editable) and its episodes. */
export function MonitorPage() {
  const { id = '' } = useParams();
  const monitor = useQuery({
    queryKey: ['monitors', id],
    queryFn: () => call(api.GET('/api/monitors/{id}', { params: { path: { id } } })),
    select: (b) => b.data,
  });
  if (monitor.isPending) return <Loading label="Loading the monitor…" />;
  if (monitor.isError) return <ErrorState error={monitor.error} retry={() => monitor.refetch()} />;
  const m = monitor.data;
  const filters = Object.entries(m.filters).filter(([, v]) => v);
  return (
    <ItemDetail
      list={{ title: 'Monitors', path: '/monitors', queryKey: 'monitors' }}
      name={m.name}
      badge={<StateBadge state={m.state} />}
      summary={
        <>
          <p className="muted">
            {m.metric === 'score_mean' ? `Mean of ${m.scoreName ?? ''}` : metricLabel(m.metric)} over {describeWindow(m.windowSeconds)},
            fires when {describeCondition(m)}
            {filters.length > 0 && ` · ${filters.map(([k, v]) => `${k} ${v}`).join(' · ')}`}
            {!m.enabled && ' · disabled'}
          </p>
          <p className="small">
            Last value <strong data-last-value>{formatMetric(m.metric, m.lastValue)}</strong>
            {m.lastEvaluatedAt ? `, checked ${formatRelative(m.lastEvaluatedAt)}` : ', not checked yet'}
          </p>
        </>
      }
      edit={(close) => <MonitorForm key={m.updatedAt} monitor={m} onSaved={close} />}
      remove={() => call(api.DELETE('/api/monitors/{id}', { params: { path: { id } } }))}
      deleteTitle="Delete this monitor?"
      deleteText={
        <>
          “<Clipped text={m.name} />” and its history are deleted.
        </>
      }
    >
      <History monitor={m} />
    </ItemDetail>
  );
}
