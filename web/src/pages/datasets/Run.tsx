import { useMemo } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { useDataset } from '../../api/datasets';
import { ErrorState, Loading } from '../../components/states';
import { Clamped, Clipped } from '../../components/Clipped';
import { formatDuration } from '../../lib/timeline';
import { formatInt, formatTime, formatUsd } from '../../lib/format';
import { comparePath, itemPath, spanPath } from '../../lib/paths';
import { ItemScores, ItemStatus, JsonCell, RunTotals, ScoreFiguresTable } from './RunFigures';

const pageSize = 100;

/** What a run records of what was run (the prompt version, the model, …), as badges. */
function RunMetadata({ metadata }: { metadata: Record<string, unknown> }) {
  const entries = Object.entries(metadata);
  if (entries.length === 0) return null;
  return (
    <div className="tags" aria-label="Run metadata">
      {entries.map(([key, value]) => (
        <span key={key} className="badge tag">
          <Clipped text={`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`} />
        </span>
      ))}
    </div>
  );
}

/**
 * One run of a dataset (`/datasets/:id/runs/:runId`, the URL the SDKs print after an
 * experiment): its figures over all items, then its items a page at a time with their output,
 * scores, cost, latency and trace.
 */
export function RunPage() {
  const { datasetId = '', runId = '' } = useParams();
  const navigate = useNavigate();
  const dataset = useDataset(datasetId);
  const run = useInfiniteQuery({
    queryKey: ['run', datasetId, runId, 'items'],
    queryFn: ({ pageParam }) =>
      call(
        api.GET('/api/datasets/{id}/runs/{runId}', {
          params: { path: { id: datasetId, runId }, query: { limit: pageSize, ...(pageParam ? { cursor: pageParam } : {}) } },
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.meta.pagination.nextCursor ?? undefined,
  });
  const others = useQuery({
    queryKey: ['dataset-runs', datasetId],
    queryFn: () => call(api.GET('/api/datasets/{id}/runs', { params: { path: { id: datasetId } } })),
    select: (body) => body.data.filter((r) => r.id !== runId),
  });
  const items = useMemo(() => (run.data?.pages ?? []).flatMap((p) => p.data.items), [run.data]);
  if (run.isPending) return <Loading label="Loading run…" />;
  if (run.isError) return <ErrorState error={run.error} retry={() => run.refetch()} />;
  const r = run.data.pages[0]!.data;
  return (
    <div className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/datasets">Datasets</Link> <span aria-hidden="true">/</span>{' '}
        <Link to={itemPath('datasets', datasetId)} className="clip" title={dataset.data?.name}>
          {dataset.data?.name ?? 'Dataset'}
        </Link>{' '}
        <span aria-hidden="true">/</span> <Clipped text={r.name} />
      </nav>
      <header className="page-head">
        <div>
          <h1>
            <Clamped text={r.name} />
          </h1>
          <p className="muted">
            {r.description ? (
              <>
                <Clipped text={r.description} />
                {' · '}
              </>
            ) : null}
            items as of {formatTime(r.datasetVersion)} · run {formatTime(r.createdAt)}
          </p>
          <RunMetadata metadata={r.metadata} />
        </div>
        {others.data && others.data.length > 0 && (
          <label className="field inline">
            <span>Compare with</span>
            <select
              value=""
              onChange={(e) => e.target.value && void navigate(comparePath(datasetId, [e.target.value, runId]))}
              aria-label="Compare with a baseline run"
            >
              <option value="">a baseline run…</option>
              {others.data.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </header>
      <RunTotals figures={r.figures} label="Run figures" />
      <section className="card" aria-labelledby="run-scores-title">
        <h2 id="run-scores-title">Scores</h2>
        <ScoreFiguresTable scores={r.figures.scores} label="Scores of the run" />
      </section>
      <section className="card" aria-labelledby="run-items-title">
        <h2 id="run-items-title">Items</h2>
        {items.length === 0 ? (
          <p className="muted">This run has no items yet.</p>
        ) : (
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Run items, scrollable">
            <table className="table compact" aria-label="Run items">
              <thead>
                <tr>
                  <th scope="col">Item</th>
                  <th scope="col">Output</th>
                  <th scope="col">Scores</th>
                  <th scope="col" className="num">
                    Cost
                  </th>
                  <th scope="col" className="num">
                    Latency
                  </th>
                  <th scope="col">Status</th>
                  <th scope="col">Trace</th>
                </tr>
              </thead>
              <tbody>
                {items.map((item) => (
                  <tr key={item.datasetItemId} data-item-id={item.datasetItemId}>
                    <th scope="row">
                      <Clipped text={item.datasetItemId} inCell />
                    </th>
                    <td className="json-col">
                      <JsonCell value={item.output} label={`Output of ${item.datasetItemId}`} />
                    </td>
                    <td>
                      <ItemScores item={item} />
                    </td>
                    <td className="num">{formatUsd(item.costUsd)}</td>
                    <td className="num">{formatDuration(item.latencyMs)}</td>
                    <td>
                      <ItemStatus item={item} />
                    </td>
                    <td className="small">
                      <Link to={spanPath(item.traceId, item.spanId)}>
                        Open trace<span className="sr-only"> of {item.datasetItemId}</span>
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {run.hasNextPage && (
          <button className="button" onClick={() => void run.fetchNextPage()} disabled={run.isFetchingNextPage}>
            {run.isFetchingNextPage ? 'Loading…' : `Load more (${formatInt(items.length)} of ${formatInt(r.itemCount)})`}
          </button>
        )}
      </section>
    </div>
  );
}
