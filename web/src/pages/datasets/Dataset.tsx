import { Link, useParams } from 'react-router';
import { useDataset } from '../../api/datasets';
import { ErrorState, Loading } from '../../components/states';
import { Clamped, Clipped } from '../../components/Clipped';
import { formatTime } from '../../lib/format';
import { DatasetItems } from './DatasetItems';
import { DatasetRuns } from './DatasetRuns';

/** A dataset: its runs with their figures, and its items. */
export function DatasetPage() {
  const datasetId = useParams().datasetId ?? '';
  const dataset = useDataset(datasetId);
  if (dataset.isPending) return <Loading label="Loading dataset…" />;
  if (dataset.isError) return <ErrorState error={dataset.error} retry={() => dataset.refetch()} />;
  const d = dataset.data;
  return (
    <div className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/datasets">Datasets</Link> <span aria-hidden="true">/</span> <Clipped text={d.name} />
      </nav>
      <header className="page-head">
        <div>
          <h1>
            <Clamped text={d.name} />
          </h1>
          <p className="muted">
            {d.description ? <Clipped text={d.description} /> : 'No description.'} · created {formatTime(d.createdAt)} ·{' '}
            <code className="small">{d.id}</code>
          </p>
        </div>
      </header>
      <DatasetRuns datasetId={d.id} />
      <DatasetItems datasetId={d.id} />
    </div>
  );
}
