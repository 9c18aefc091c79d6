import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, call } from '../../api/client';
import { useListMutation } from '../../api/list-mutation';
import { useDatasets } from '../../api/datasets';
import type { Dataset, NewDataset } from '../../api/types';
import { EmptyState, ErrorState } from '../../components/states';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Loaded } from '../../components/Loaded';
import { formText } from '../../lib/form';
import { Clipped, ClippedLink } from '../../components/Clipped';
import { RecordTable } from '../../components/RecordTable';
import { ListPage } from '../../components/ListPage';
import { formatTime } from '../../lib/format';
import { itemPath } from '../../lib/paths';

function NewDatasetForm({ onCreated }: { onCreated: (dataset: Dataset) => void }) {
  const create = useListMutation(
    'datasets',
    (body: NewDataset) => call(api.POST('/api/datasets/', { body })),
    (answer) => onCreated(answer.data),
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = formText(event.currentTarget);
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
  const [deleting, setDeleting] = useState<Dataset | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/api/datasets/{id}', { params: { path: { id } } })),
    onSuccess: async () => {
      setDeleting(null);
      await queryClient.invalidateQueries({ queryKey: ['datasets'] });
    },
  });
  return (
    <ListPage
      title="Datasets"
      intro="Fixed cases to run a prompt or an agent over; each run is scored and compared item by item."
      newLabel="New dataset"
      form={() => <NewDatasetForm onCreated={(d) => void navigate(itemPath('datasets', d.id))} />}
    >
      <Loaded
        query={datasets}
        loading="Loading datasets…"
        emptyState={
          <EmptyState title="No datasets yet">
            <p>
              Create one here, then add items: as JSON on its page, or from a span with &ldquo;Add to dataset&rdquo; on a trace page. Run an
              experiment over it with the SDK&apos;s <code>loupe.experiment</code>.
            </p>
          </EmptyState>
        }
      >
        {(list) => (
          <RecordTable label="Datasets" columns={['Name', 'Description', 'Created', 'Updated']}>
            {list.map((d) => (
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
          </RecordTable>
        )}
      </Loaded>
      {deleting && (
        <ConfirmDialog
          title="Delete this dataset?"
          pending={remove.isPending}
          error={remove.error}
          onCancel={() => setDeleting(null)}
          onConfirm={() => remove.mutate(deleting.id)}
        >
          <p>
            “<Clipped text={deleting.name} />” with all its items and runs is deleted for good. The runs&apos; traces and scores stay.
          </p>
        </ConfirmDialog>
      )}
    </ListPage>
  );
}
