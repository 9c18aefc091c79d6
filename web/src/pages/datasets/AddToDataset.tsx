import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { ErrorState } from '../../components/states';
import { Clipped } from '../../components/Clipped';
import { itemPath } from '../../lib/paths';
import { useDatasets } from '../../api/datasets';

/**
 * "Add to dataset" on a span: the span's input becomes an item's input and its output the
 * expected output, the item naming the span as its source.
 */
export function AddToDataset({ traceId, spanId }: { traceId: string; spanId: string }) {
  const datasets = useDatasets();
  const queryClient = useQueryClient();
  const [chosen, setChosen] = useState('');
  const add = useMutation({
    mutationFn: (datasetId: string) =>
      call(api.POST('/api/datasets/{id}/items/from-span', { params: { path: { id: datasetId } }, body: { traceId, spanId } })),
    onSuccess: (answer) => queryClient.invalidateQueries({ queryKey: ['dataset-items', answer.data.datasetId] }),
  });
  if (datasets.isPending) return null;
  if (datasets.isError) return <ErrorState error={datasets.error} retry={() => datasets.refetch()} />;
  if (datasets.data.length === 0)
    return (
      <p className="muted small">
        No datasets yet: create one on the <Link to="/datasets">Datasets</Link> page to add this span to it.
      </p>
    );
  const datasetId = chosen || datasets.data[0]!.id;
  const added = add.data?.data;
  const addedTo = added && datasets.data.find((d) => d.id === added.datasetId);
  function submit(event: FormEvent) {
    event.preventDefault();
    add.mutate(datasetId);
  }
  return (
    <form className="inline-form add-to-dataset" onSubmit={submit} aria-label="Add to dataset">
      <label className="field inline">
        <span>Dataset</span>
        <select value={datasetId} onChange={(e) => setChosen(e.target.value)}>
          {datasets.data.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <button className="button small" type="submit" disabled={add.isPending}>
        {add.isPending ? 'Adding…' : 'Add to dataset'}
      </button>
      {added && addedTo && (
        <span className="small" role="status">
          Added as item <Clipped text={added.id} /> of{' '}
          <Link to={itemPath('datasets', addedTo.id)} className="clip" title={addedTo.name}>
            {addedTo.name}
          </Link>
        </span>
      )}
      {add.isError && <ErrorState error={add.error} />}
    </form>
  );
}
