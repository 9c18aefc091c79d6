import { useState } from 'react';
import { useQueries, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import type { RunFigures } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { Clipped, ClippedLink } from '../../components/Clipped';
import { formatDuration } from '../../lib/timeline';
import { formatDecimal, formatInt, formatTime, formatUsd } from '../../lib/format';
import { comparePath, runPath } from '../../lib/paths';
import { intervalText } from './RunFigures';

/** The runs whose figures are read for the list: the newest (a dataset may be run thousands of times). */
const runsWithFigures = 20;

function ScoreCell({ figures, name }: { figures: RunFigures | undefined; name: string }) {
  const s = figures?.scores.find((x) => x.name === name);
  if (!s) return <span className="muted">—</span>;
  return (
    <span title={`n ${s.n}, 95% interval ${intervalText(s.ci95)}`}>
      <strong>{formatDecimal(s.mean)}</strong>
      <span className="muted small nowrap"> [{intervalText(s.ci95)}]</span>
      <span className="muted small"> n {formatInt(s.n)}</span>
    </span>
  );
}

/**
 * A dataset's runs, newest first, with their figures (per score name the mean, its 95% interval
 * and n; cost, latency p50/p95, errors). Ticking runs picks them for a comparison, the first
 * ticked the baseline.
 */
export function DatasetRuns({ datasetId }: { datasetId: string }) {
  const [picked, setPicked] = useState<string[]>([]);
  const runs = useQuery({
    queryKey: ['dataset-runs', datasetId],
    queryFn: () => call(api.GET('/api/datasets/{id}/runs', { params: { path: { id: datasetId } } })),
    select: (body) => body.data,
  });
  const shown = (runs.data ?? []).slice(0, runsWithFigures);
  const figures = useQueries({
    queries: shown.map((run) => ({
      queryKey: ['run', datasetId, run.id, 'figures'],
      queryFn: () =>
        call(api.GET('/api/datasets/{id}/runs/{runId}', { params: { path: { id: datasetId, runId: run.id }, query: { limit: 1 } } })),
      select: (body: { data: { figures: RunFigures } }) => body.data.figures,
    })),
  });
  const scoreNames = [...new Set(figures.flatMap((f) => (f.data?.scores ?? []).map((s) => s.name)))].sort();
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id]));
  const nameOf = (id: string) => runs.data?.find((r) => r.id === id)?.name ?? id;
  return (
    <section className="card" aria-labelledby="runs-title">
      <div className="card-head">
        <h2 id="runs-title">Runs</h2>
        <div className="button-row">
          {picked.length > 0 && (
            <span className="muted small">
              Baseline: <Clipped text={nameOf(picked[0]!)} />
            </span>
          )}
          {picked.length >= 2 ? (
            <Link className="button primary" to={comparePath(datasetId, picked)}>
              Compare {picked.length} runs
            </Link>
          ) : (
            (runs.data?.length ?? 0) >= 2 && <span className="muted small">Tick two runs or more to compare them.</span>
          )}
        </div>
      </div>
      {runs.isPending ? (
        <Loading label="Loading runs…" />
      ) : runs.isError ? (
        <ErrorState error={runs.error} retry={() => runs.refetch()} />
      ) : runs.data.length === 0 ? (
        <p className="muted">
          No runs yet. Run an experiment over this dataset with the SDK:{' '}
          <code>
            loupe.experiment({'{'} dataset: &apos;{datasetId}&apos;, name, task, evaluators {'}'})
          </code>
          .
        </p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Runs, scrollable">
          <table className="table compact" aria-label="Runs">
            <thead>
              <tr>
                <th scope="col">
                  <span className="sr-only">Compare</span>
                </th>
                <th scope="col">Run</th>
                <th scope="col">Created</th>
                <th scope="col" className="num">
                  Items
                </th>
                <th scope="col" className="num">
                  Errors
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col" className="num">
                  Latency p50
                </th>
                <th scope="col" className="num">
                  Latency p95
                </th>
                {scoreNames.map((name) => (
                  <th scope="col" key={name} data-score-column={name}>
                    <Clipped text={name} />
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((run, index) => {
                const f = figures[index]?.data;
                return (
                  <tr key={run.id} data-run={run.name}>
                    <td>
                      <input
                        type="checkbox"
                        checked={picked.includes(run.id)}
                        onChange={() => toggle(run.id)}
                        aria-label={`Compare ${run.name}`}
                      />
                    </td>
                    <td>
                      <ClippedLink to={runPath(datasetId, run.id)} text={run.name} inCell />
                      {run.description && (
                        <div className="muted small">
                          <Clipped text={run.description} inCell />
                        </div>
                      )}
                    </td>
                    <td className="muted small nowrap">{formatTime(run.createdAt)}</td>
                    <td className="num">{formatInt(run.itemCount)}</td>
                    <td className={f && f.errors > 0 ? 'num text-error' : 'num'} data-testid="run-errors">
                      {formatInt(f?.errors)}
                    </td>
                    <td className="num">{formatUsd(f?.costUsd)}</td>
                    <td className="num">{formatDuration(f?.latencyP50)}</td>
                    <td className="num">{formatDuration(f?.latencyP95)}</td>
                    {scoreNames.map((name) => (
                      <td key={name} data-score={name}>
                        <ScoreCell figures={f} name={name} />
                      </td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
          {runs.data.length > shown.length && (
            <p className="muted small">
              The newest {shown.length} of {formatInt(runs.data.length)} runs.
            </p>
          )}
        </div>
      )}
    </section>
  );
}
