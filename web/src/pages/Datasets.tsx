import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, call } from '../api/client';
import { useDatasets } from '../api/datasets';
import type { Dataset, NewDataset } from '../api/types';
import { EmptyState, ErrorState, Loading } from '../components/states';
import { Clipped, ClippedLink } from '../components/Clipped';
import { formatTime } from '../lib/format';
import { itemPath } from '../lib/paths';

function NewDatasetForm({ onCreated }: { onCreated: (dataset: Dataset) => void }) {
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: (body: NewDataset) => call(api.POST('/api/datasets/', { body })),
    onSuccess: async (answer) => {
      await queryClient.invalidateQueries({ queryKey: ['datasets'] });
      onCreated(answer.data);
    },
  });
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (key: string) => {
      const value = form.get(key);
      return typeof value === 'string' ? value.trim() : '';
    };
    create.mutate({ name: text('name'), ...(text('description') ? { description: text('description') } : {}) });
  }
  return (
    <form className="card filters" onSubmit={submit} aria-label="New dataset">
      <label className="field">
        <span>Name</span>
        <input name="name" required maxLength={200} placeholder="support questions" />
      </label>
      <label className="field grow">
        <span>Description</span>
        <input name="description" maxLength={4000} />
      </label>
      <div className="filter-actions">
        <button className="button primary" type="submit" disabled={create.isPending}>
          Create dataset
        </button>
      </div>
      {create.isError && <ErrorState error={create.error} />}
    </form>
  );
}

/** Datasets: fixed cases to run a prompt or an agent over, and compare runs on. */
export function DatasetsPage() {
  const datasets = useDatasets();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [formOpen, setFormOpen] = useState(false);
  const [deleting, setDeleting] = useState<Dataset | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/api/datasets/{id}', { params: { path: { id } } })),
    onSuccess: async () => {
      setDeleting(null);
      await queryClient.invalidateQueries({ queryKey: ['datasets'] });
    },
  });
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Datasets</h1>
          <p className="muted">Fixed cases to run a prompt or an agent over; each run is scored and compared item by item.</p>
        </div>
        <button className="button primary" onClick={() => setFormOpen((o) => !o)} aria-expanded={formOpen}>
          {formOpen ? 'Close' : 'New dataset'}
        </button>
      </header>
      {formOpen && <NewDatasetForm onCreated={(d) => void navigate(itemPath('datasets', d.id))} />}
      {datasets.isPending ? (
        <Loading label="Loading datasets…" />
      ) : datasets.isError ? (
        <ErrorState error={datasets.error} retry={() => datasets.refetch()} />
      ) : datasets.data.length === 0 ? (
        <EmptyState title="No datasets yet">
          <p>
            Create one here, then add items: as JSON on its page, or from a span with &ldquo;Add to dataset&rdquo; on a trace page. Run an
            experiment over it with the SDK&apos;s <code>loupe.experiment</code>.
          </p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Datasets">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {datasets.data.map((d) => (
                <tr key={d.id} data-dataset={d.name}>
                  <td>
                    <ClippedLink to={itemPath('datasets', d.id)} text={d.name} inCell />
                  </td>
                  <td className="muted">{d.description ? <Clipped text={d.description} inCell /> : '—'}</td>
                  <td className="muted small">{formatTime(d.createdAt)}</td>
                  <td className="muted small">{formatTime(d.updatedAt)}</td>
                  <td>
                    <button className="button small danger" onClick={() => setDeleting(d)} aria-label={`Delete dataset ${d.name}`}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {deleting && (
        <div className="modal-backdrop">
          <div className="modal" role="dialog" aria-modal="true" aria-labelledby="delete-dataset-title">
            <h2 id="delete-dataset-title">Delete this dataset?</h2>
            <p>
              “<Clipped text={deleting.name} />” with all its items and runs is deleted for good. The runs&apos; traces and scores stay.
            </p>
            {remove.isError && <ErrorState error={remove.error} />}
            <div className="modal-actions">
              <button className="button" onClick={() => setDeleting(null)} autoFocus>
                Cancel
              </button>
              <button className="button danger" onClick={() => remove.mutate(deleting.id)} disabled={remove.isPending}>
                {remove.isPending ? 'Deleting…' : 'Delete'}
              </button>
            </div>
          </div>
        </div>
      )}
    </div>
  );
}
