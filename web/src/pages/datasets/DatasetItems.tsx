import { useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import { ErrorState, Loading } from '../../components/states';
import { Clipped, ClippedLink } from '../../components/Clipped';
import { formatInt, formatTime } from '../../lib/format';
import { spanPath } from '../../lib/paths';
import { JsonCell } from './RunFigures';

const pageSize = 50;
const statuses = ['active', 'archived', 'all'] as const;
type Status = (typeof statuses)[number];

/** Items as JSON: one item, an array of them, or `{items: [...]}` (up to 1,000, answered per item). */
function AddItemsForm({ datasetId }: { datasetId: string }) {
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const [parseError, setParseError] = useState<string | null>(null);
  const add = useMutation({
    mutationFn: (items: unknown[]) => call(api.POST('/api/datasets/{id}/items', { params: { path: { id: datasetId } }, body: { items } })),
    onSuccess: async (answer) => {
      if (answer.data.rejected === 0) setText('');
      await queryClient.invalidateQueries({ queryKey: ['dataset-items', datasetId] });
    },
  });
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      setParseError(`Not JSON: ${(error as Error).message}`);
      return;
    }
    setParseError(null);
    const items = Array.isArray(value)
      ? value
      : value !== null && typeof value === 'object' && Array.isArray((value as { items?: unknown }).items)
        ? (value as { items: unknown[] }).items
        : [value];
    add.mutate(items);
  }
  const result = add.data?.data;
  return (
    <form className="card add-items" onSubmit={submit} aria-label="Add items">
      <label className="field">
        <span>
          Items as JSON: one item or an array, each <code>{'{"input": …, "expectedOutput": …, "id"?: …, "metadata"?: …}'}</code>. A known id
          is a new version of its item.
        </span>
        <textarea
          rows={6}
          value={text}
          onChange={(e) => setText(e.target.value)}
          required
          spellCheck={false}
          placeholder={'[{"id": "q1", "input": {"question": "Is my kettle under warranty?"}, "expectedOutput": "Yes"}]'}
        />
      </label>
      <div className="button-row">
        <button className="button primary" type="submit" disabled={add.isPending}>
          {add.isPending ? 'Adding…' : 'Add items'}
        </button>
        {result && (
          <span className={result.rejected ? 'text-error' : 'muted'} role="status" data-testid="add-items-result">
            {formatInt(result.accepted)} added{result.rejected ? `, ${formatInt(result.rejected)} refused` : ''}
          </span>
        )}
      </div>
      {parseError && (
        <p className="alert alert-error" role="alert">
          {parseError}
        </p>
      )}
      {result && result.errors.length > 0 && (
        <ul className="alert alert-error" aria-label="Refused items">
          {result.errors.slice(0, 20).map((e) => (
            <li key={e.index}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      )}
      {add.isError && <ErrorState error={add.error} />}
    </form>
  );
}

/**
 * A dataset's items as they are now, a page at a time by the API's cursor (in the URL, with the
 * status shown): input, expected output, source span; archive and unarchive (new versions, so
 * runs over earlier times keep reading them).
 */
export function DatasetItems({ datasetId }: { datasetId: string }) {
  const [params, setParams] = useSearchParams();
  const queryClient = useQueryClient();
  const [adding, setAdding] = useState(false);
  const status: Status = (statuses as readonly string[]).includes(params.get('status') ?? '') ? (params.get('status') as Status) : 'active';
  const cursor = params.get('cursor') ?? undefined;
  const items = useQuery({
    queryKey: ['dataset-items', datasetId, status, cursor],
    queryFn: () =>
      call(
        api.GET('/api/datasets/{id}/items', {
          params: { path: { id: datasetId }, query: { status, limit: pageSize, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const setStatus = useMutation({
    mutationFn: ({ itemId, archive }: { itemId: string; archive: boolean }) =>
      call(
        archive
          ? api.POST('/api/datasets/{id}/items/{itemId}/archive', { params: { path: { id: datasetId, itemId } } })
          : api.POST('/api/datasets/{id}/items/{itemId}/unarchive', { params: { path: { id: datasetId, itemId } } }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['dataset-items', datasetId] }),
  });
  const go = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) next.delete(k);
      else next.set(k, v);
    }
    setParams(next, { replace: true });
  };
  const next = items.data?.meta.pagination.nextCursor;
  return (
    <section className="card" aria-labelledby="items-title">
      <div className="card-head">
        <h2 id="items-title">Items</h2>
        <div className="button-row">
          <label className="field inline">
            <span>Status</span>
            <select value={status} onChange={(e) => go({ status: e.target.value === 'active' ? null : e.target.value, cursor: null })}>
              {statuses.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <button className="button" onClick={() => setAdding((a) => !a)} aria-expanded={adding}>
            {adding ? 'Close' : 'Add items as JSON'}
          </button>
        </div>
      </div>
      {adding && <AddItemsForm datasetId={datasetId} />}
      {setStatus.isError && <ErrorState error={setStatus.error} />}
      {items.isPending ? (
        <Loading label="Loading items…" />
      ) : items.isError ? (
        <ErrorState error={items.error} retry={() => items.refetch()} />
      ) : items.data.data.length === 0 ? (
        <p className="muted">
          {status === 'active'
            ? 'No items yet: add them as JSON, or from a span with "Add to dataset" on a trace page.'
            : `No ${status === 'all' ? '' : `${status} `}items.`}
        </p>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Items, scrollable">
            <table className="table compact" aria-label="Items">
              <thead>
                <tr>
                  <th scope="col">Id</th>
                  <th scope="col">Input</th>
                  <th scope="col">Expected output</th>
                  <th scope="col">Source</th>
                  <th scope="col">Since</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.data.data.map((item) => (
                  <tr key={item.id} data-item-id={item.id} className={item.status === 'archived' ? 'muted' : undefined}>
                    <td>
                      <Clipped text={item.id} inCell /> {item.status === 'archived' && <span className="badge">archived</span>}
                    </td>
                    <td className="json-col">
                      <JsonCell value={item.input} label={`Input of ${item.id}`} />
                    </td>
                    <td className="json-col">
                      <JsonCell value={item.expectedOutput} label={`Expected output of ${item.id}`} />
                    </td>
                    <td className="small">
                      {item.sourceTraceId ? (
                        <ClippedLink
                          to={spanPath(item.sourceTraceId, item.sourceSpanId)}
                          text={item.sourceSpanId ?? item.sourceTraceId}
                          inCell
                        />
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td className="muted small nowrap">{formatTime(item.validFrom)}</td>
                    <td>
                      <button
                        className="button small"
                        disabled={setStatus.isPending}
                        onClick={() => setStatus.mutate({ itemId: item.id, archive: item.status !== 'archived' })}
                        aria-label={`${item.status === 'archived' ? 'Unarchive' : 'Archive'} item ${item.id}`}
                      >
                        {item.status === 'archived' ? 'Unarchive' : 'Archive'}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages of items">
            {cursor && (
              <button className="button" onClick={() => go({ cursor: null })}>
                First page
              </button>
            )}
            {next && (
              <button className="button" onClick={() => go({ cursor: next })}>
                Next
              </button>
            )}
          </nav>
        </>
      )}
    </section>
  );
}
