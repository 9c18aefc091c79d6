/** Datasets: the queries several pages share (the trace page's "Add to dataset" among them). */
import { useQuery } from '@tanstack/react-query';
import { api, call } from './client';

/** The workspace's datasets, by name. */
export function useDatasets() {
  return useQuery({
    queryKey: ['datasets'],
    queryFn: () => call(api.GET('/api/datasets/')),
    select: (body) => body.data,
  });
}

/** One dataset of the workspace (its name for headings and breadcrumbs). */
export function useDataset(datasetId: string) {
  return useQuery({
    queryKey: ['datasets', datasetId],
    queryFn: () => call(api.GET('/api/datasets/{id}', { params: { path: { id: datasetId } } })),
    select: (body) => body.data,
  });
}
