import { useMemo, useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import { useDataset } from '../../api/datasets';
import type { Run, RunComparisonMetric, RunItemFigures } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { Clipped } from '../../components/Clipped';
import { formatDuration } from '../../lib/timeline';
import { formatDecimal, formatInt, formatPValue, formatSigned, formatUsd } from '../../lib/format';
import { itemPath, runPath, spanPath } from '../../lib/paths';
import { runsDisagree } from '../../lib/runs';
import { ItemScores, ItemStatus, JsonCell } from './RunFigures';

const pageSize = 100;

const testNames: Record<NonNullable<RunComparisonMetric['test']>, string> = {
  paired_t: 'paired t',
  mcnemar_exact: "McNemar's exact",
  mcnemar_chi_square: "McNemar's chi-square",
  stuart_maxwell: 'Stuart–Maxwell',
};

const metricLabel = (m: RunComparisonMetric) => (m.kind === 'cost' ? 'Cost' : m.kind === 'latency' ? 'Latency' : m.name);

/** A metric's figure in its unit: dollars, a duration, or a score's mean. */
function metricValue(m: RunComparisonMetric, value: number | null, signed = false): string {
  if (value === null) return '—';
  if (m.kind === 'cost') return `${signed && value > 0 ? '+' : ''}${formatUsd(value)}`;
  if (m.kind === 'latency') return `${signed && value > 0 ? '+' : signed && value < 0 ? '-' : ''}${formatDuration(Math.abs(value))}`;
  return signed ? formatSigned(value) : formatDecimal(value);
}

/** Per metric, each run against the baseline over the items both have: the test and its verdict. */
function Verdicts({ metrics, runs }: { metrics: RunComparisonMetric[]; runs: Run[] }) {
  const nameOf = (id: string) => runs.find((r) => r.id === id)?.name ?? id;
  if (metrics.length === 0)
    return <p className="muted">Nothing to compare yet: no numeric or boolean score, cost or latency on items both runs have.</p>;
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Verdicts, scrollable">
      <table className="table compact" aria-label="Verdicts">
        <thead>
          <tr>
            <th scope="col">Metric</th>
            <th scope="col">Run</th>
            <th scope="col" className="num">
              n
            </th>
            <th scope="col" className="num">
              Baseline
            </th>
            <th scope="col" className="num">
              Run
            </th>
            <th scope="col" className="num">
              Difference
            </th>
            <th scope="col">Test</th>
            <th scope="col" className="num">
              p-value
            </th>
            <th scope="col">Verdict</th>
          </tr>
        </thead>
        <tbody>
          {metrics.map((m) => (
            <tr key={`${m.kind}-${m.name}-${m.runId}`} data-metric={m.name} data-run-id={m.runId}>
              <th scope="row">
                <Clipped text={metricLabel(m)} inCell />
                <div className="muted small">
                  {m.kind === 'score' ? m.dataType : m.kind}
                  {m.higherIsBetter ? '' : ' · lower is better'}
                </div>
              </th>
              <td>
                <Clipped text={nameOf(m.runId)} inCell />
              </td>
              <td className="num">{formatInt(m.n)}</td>
              <td className="num">{metricValue(m, m.baselineMean)}</td>
              <td className="num">{metricValue(m, m.mean)}</td>
              <td className="num">{metricValue(m, m.difference, true)}</td>
              <td className="small">
                {m.test ? testNames[m.test] : '—'}
                {m.statistic !== null && (
                  <div className="muted">{`stat ${formatDecimal(m.statistic)}${m.df !== null ? `, df ${formatDecimal(m.df, 1)}` : ''}`}</div>
                )}
              </td>
              <td className="num">{formatPValue(m.pValue)}</td>
              <td data-testid="verdict" className={`verdict-${m.verdict.replace(/ /g, '-')}`}>
                {m.verdict}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RunSide({ item, label }: { item: RunItemFigures | null; label: string }) {
  if (!item) return <span className="muted">Not in this run</span>;
  return (
    <div className="run-side">
      <JsonCell value={item.output} label={`Output of ${label}`} />
      <ItemScores item={item} />
      <div className="muted small">
        {formatUsd(item.costUsd)} · {formatDuration(item.latencyMs)} ·{' '}
        <Link to={spanPath(item.traceId, item.spanId)}>
          trace<span className="sr-only"> of {label}</span>
        </Link>
      </div>
      <ItemStatus item={item} />
    </div>
  );
}

/**
 * Runs of a dataset side by side (`/datasets/:id/compare?runs=a,b`, the first the baseline): the
 * verdicts first, then the items with each run's output and scores, filtered to the items where
 * the runs disagree when asked (`&disagree=1`).
 */
export function RunComparePage() {
  const datasetId = useParams().datasetId ?? '';
  const [params, setParams] = useSearchParams();
  const runIds = (params.get('runs') ?? '').split(',').filter(Boolean);
  // Held here as well as in the URL: the URL changes in a transition, the box must follow the click at once.
  const [onlyDisagreeing, setOnlyDisagreeing] = useState(params.get('disagree') === '1');
  const dataset = useDataset(datasetId);
  const comparison = useInfiniteQuery({
    queryKey: ['run-compare', datasetId, runIds.join(',')],
    queryFn: ({ pageParam }) =>
      call(
        api.GET('/api/datasets/{id}/runs/compare', {
          params: {
            path: { id: datasetId },
            query: { runs: runIds.join(','), limit: pageSize, ...(pageParam ? { cursor: pageParam } : {}) },
          },
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.meta.pagination.nextCursor ?? undefined,
  });
  const items = useMemo(() => (comparison.data?.pages ?? []).flatMap((p) => p.data.items), [comparison.data]);
  const disagreeing = useMemo(() => items.filter((i) => runsDisagree(i.runs)), [items]);
  if (comparison.isPending) return <Loading label="Comparing runs…" />;
  if (comparison.isError) return <ErrorState error={comparison.error} retry={() => comparison.refetch()} />;
  const c = comparison.data.pages[0]!.data;
  const shown = onlyDisagreeing ? disagreeing : items;
  const setFilter = (on: boolean) => {
    setOnlyDisagreeing(on);
    const next = new URLSearchParams(params);
    if (on) next.set('disagree', '1');
    else next.delete('disagree');
    setParams(next, { replace: true });
  };
  return (
    <div className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/datasets">Datasets</Link> <span aria-hidden="true">/</span>{' '}
        <Link to={itemPath('datasets', datasetId)} className="clip" title={dataset.data?.name}>
          {dataset.data?.name ?? 'Dataset'}
        </Link>{' '}
        <span aria-hidden="true">/</span> Compare runs
      </nav>
      <header className="page-head">
        <div>
          <h1>Compare runs</h1>
          <p className="muted">
            Each run against the baseline{' '}
            <Link to={runPath(datasetId, c.runs[0]!.id)} className="clip" title={c.runs[0]!.name}>
              {c.runs[0]!.name}
            </Link>{' '}
            over the items both have: better or worse when p &lt; 0.05 in the metric&apos;s direction.
          </p>
        </div>
      </header>
      <section className="card" aria-labelledby="verdicts-title">
        <h2 id="verdicts-title">Verdicts</h2>
        <Verdicts metrics={c.metrics} runs={c.runs} />
      </section>
      <section className="card" aria-labelledby="compare-items-title">
        <div className="card-head">
          <h2 id="compare-items-title">Items side by side</h2>
          <label className="toggle">
            <input type="checkbox" checked={onlyDisagreeing} onChange={(e) => setFilter(e.target.checked)} />
            Only items where the runs disagree
          </label>
        </div>
        <p className="muted small" data-testid="compare-count">
          {onlyDisagreeing
            ? `${formatInt(disagreeing.length)} of ${formatInt(items.length)} items loaded disagree (a score, or failing, differs; or a run lacks the item).`
            : `${formatInt(items.length)} items loaded, ${formatInt(disagreeing.length)} where the runs disagree.`}
        </p>
        {shown.length > 0 && (
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Items side by side, scrollable">
            <table className="table compact side-by-side" aria-label="Items side by side">
              <thead>
                <tr>
                  <th scope="col">Item</th>
                  {c.runs.map((run, index) => (
                    <th scope="col" key={run.id}>
                      <Link to={runPath(datasetId, run.id)} className="clip-cell" title={run.name}>
                        {run.name}
                      </Link>
                      {index === 0 && <span className="muted small"> (baseline)</span>}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {shown.map((item) => (
                  <tr key={item.datasetItemId} data-item-id={item.datasetItemId}>
                    <th scope="row">
                      <Clipped text={item.datasetItemId} inCell />
                    </th>
                    {item.runs.map((side, index) => (
                      <td key={c.runs[index]!.id} data-run-id={c.runs[index]!.id}>
                        <RunSide item={side} label={`${item.datasetItemId} in ${c.runs[index]!.name}`} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {comparison.hasNextPage && (
          <button className="button" onClick={() => void comparison.fetchNextPage()} disabled={comparison.isFetchingNextPage}>
            {comparison.isFetchingNextPage ? 'Loading…' : 'Load more items'}
          </button>
        )}
      </section>
    </div>
  );
}
