import type { RunFigures, RunItemFigures } from '../../api/types';
import { Json } from '../../components/Json';
import { Clipped } from '../../components/Clipped';
import { Totals } from '../../components/GroupList';
import { formatDuration } from '../../lib/timeline';
import { formatDecimal, formatInt, formatUsd } from '../../lib/format';
import { jsonPreview } from '../../lib/runs';

/** A JSON value in a table cell: one clipped line, the whole value as a tree when opened. */
export function JsonCell({ value, label }: { value: unknown; label: string }) {
  if (value === undefined || value === null) return <span className="muted">—</span>;
  return (
    <details className="json-cell">
      <summary>
        <code className="clip-cell" aria-label={label}>
          {jsonPreview(value)}
        </code>
      </summary>
      <Json value={value} label={label} />
    </details>
  );
}

/** A run's totals: items, errors, cost and latency over all its items. */
export function RunTotals({ figures, label }: { figures: RunFigures; label: string }) {
  return (
    <Totals
      label={label}
      items={[
        { label: 'Items', value: formatInt(figures.items), kpi: 'items' },
        { label: 'Errors', value: formatInt(figures.errors), kpi: 'errors', error: figures.errors > 0 },
        { label: 'Cost', value: formatUsd(figures.costUsd), kpi: 'cost' },
        { label: 'Latency p50', value: formatDuration(figures.latencyP50), kpi: 'p50' },
        { label: 'Latency p95', value: formatDuration(figures.latencyP95), kpi: 'p95' },
      ]}
    />
  );
}

export const intervalText = (ci: { low: number; high: number } | null) =>
  ci ? `${formatDecimal(ci.low)} – ${formatDecimal(ci.high)}` : '—';

/** Per score name of a run: items scored, mean and its 95% interval. */
export function ScoreFiguresTable({ scores, label }: { scores: RunFigures['scores']; label: string }) {
  if (scores.length === 0) return <p className="muted">No scores on this run&apos;s traces yet.</p>;
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={`${label}, scrollable`}>
      <table className="table compact" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Score</th>
            <th scope="col">Type</th>
            <th scope="col" className="num">
              n
            </th>
            <th scope="col" className="num">
              Mean
            </th>
            <th scope="col" className="num">
              95% interval
            </th>
          </tr>
        </thead>
        <tbody>
          {scores.map((s) => (
            <tr key={s.name} data-score={s.name}>
              <th scope="row">
                <Clipped text={s.name} inCell />
              </th>
              <td>{s.dataType}</td>
              <td className="num" data-testid="score-n">
                {formatInt(s.n)}
              </td>
              <td className="num" data-testid="score-mean">
                {formatDecimal(s.mean)}
              </td>
              <td className="num nowrap" data-testid="score-ci">
                {intervalText(s.ci95)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A run item's scores as "name value" pairs. */
export function ItemScores({ item }: { item: Pick<RunItemFigures, 'scores'> }) {
  const entries = Object.entries(item.scores).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="item-scores">
      {entries.map(([name, value]) => (
        <li key={name} data-score-name={name}>
          <Clipped text={name} /> <strong data-testid="item-score">{formatDecimal(value)}</strong>
        </li>
      ))}
    </ul>
  );
}

/** Whether a run item failed, and why when an error was recorded. */
export function ItemStatus({ item }: { item: Pick<RunItemFigures, 'failed' | 'error'> }) {
  if (!item.failed) return <span className="badge status-ok">ok</span>;
  return (
    <>
      <span className="badge status-error">failed</span>
      {item.error && (
        <div className="small text-error">
          <Clipped text={item.error} inCell />
        </div>
      )}
    </>
  );
}
