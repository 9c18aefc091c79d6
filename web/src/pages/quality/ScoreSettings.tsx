import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import { useListMutation } from '../../api/list-mutation';
import type { NewScoreConfig, ScoreConfig } from '../../api/types';
import { ErrorState } from '../../components/states';
import { Loaded } from '../../components/Loaded';
import { formText } from '../../lib/form';
import { Clipped } from '../../components/Clipped';
import { RecordTable } from '../../components/RecordTable';
import { ListPage } from '../../components/ListPage';
import { formatTime } from '../../lib/format';
import { useScoreConfigs } from './Scores';

/** "good=1, bad=0" → categories; a label without "=" takes its position as its value. */
function parseCategories(text: string): NewScoreConfig['categories'] {
  const parts = text
    .split(/[,\n]/)
    .map((p) => p.trim())
    .filter(Boolean);
  return parts.map((part, index) => {
    const at = part.lastIndexOf('=');
    if (at <= 0) return { label: part, value: index };
    return { label: part.slice(0, at).trim(), value: Number(part.slice(at + 1)) };
  });
}

function describe(config: ScoreConfig): string {
  if (config.dataType === 'numeric')
    return config.min !== null || config.max !== null ? `${config.min ?? '−∞'} to ${config.max ?? '∞'}` : 'any number';
  if (config.dataType === 'categorical') return (config.categories ?? []).map((c) => `${c.label} = ${c.value}`).join(', ');
  return 'true / false';
}

function NewConfigForm({ onCreated }: { onCreated: () => void }) {
  const [dataType, setDataType] = useState<ScoreConfig['dataType']>('numeric');
  const create = useListMutation('score-configs', (body: NewScoreConfig) => call(api.POST('/api/score-configs/', { body })), onCreated);
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = formText(event.currentTarget);
    const numberOf = (key: string) => (text(key) === '' ? undefined : Number(text(key)));
    const body: NewScoreConfig = {
      name: text('name'),
      dataType,
      higherIsBetter: form.get('direction') !== 'lower',
      ...(text('description') ? { description: text('description') } : {}),
      ...(dataType === 'numeric' && numberOf('min') !== undefined ? { min: numberOf('min') } : {}),
      ...(dataType === 'numeric' && numberOf('max') !== undefined ? { max: numberOf('max') } : {}),
      ...(dataType === 'categorical' ? { categories: parseCategories(text('categories')) } : {}),
    };
    create.mutate(body);
  }
  return (
    <form className="card filters" onSubmit={submit} aria-label="New score config">
      <label className="field">
        <span>Name</span>
        <input name="name" required maxLength={200} placeholder="helpfulness" />
      </label>
      <label className="field">
        <span>Type</span>
        <select name="dataType" value={dataType} onChange={(e) => setDataType(e.target.value as ScoreConfig['dataType'])}>
          <option value="numeric">numeric</option>
          <option value="boolean">boolean</option>
          <option value="categorical">categorical</option>
        </select>
      </label>
      {dataType === 'numeric' && (
        <>
          <label className="field">
            <span>Minimum</span>
            <input name="min" type="number" step="any" />
          </label>
          <label className="field">
            <span>Maximum</span>
            <input name="max" type="number" step="any" />
          </label>
        </>
      )}
      {dataType === 'categorical' && (
        <label className="field">
          <span>Categories (label=value, comma separated)</span>
          <input name="categories" required placeholder="good=1, neutral=0.5, bad=0" />
        </label>
      )}
      <label className="field">
        <span>Better is</span>
        <select name="direction" defaultValue="higher">
          <option value="higher">higher</option>
          <option value="lower">lower</option>
        </select>
      </label>
      <label className="field">
        <span>Description</span>
        <input name="description" maxLength={4000} />
      </label>
      <div className="filter-actions">
        <button className="button primary" type="submit" disabled={create.isPending}>
          Create config
        </button>
      </div>
      {create.isError && <ErrorState error={create.error} />}
    </form>
  );
}

/** Settings → Scores: the workspace's score configs (what annotations offer and scores are checked against). */
export function ScoreSettingsPage() {
  const configs = useScoreConfigs(true);
  const queryClient = useQueryClient();
  const archive = useMutation({
    mutationFn: ({ id, archived }: { id: string; archived: boolean }) =>
      call(api.PATCH('/api/score-configs/{id}', { params: { path: { id } }, body: { archived } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['score-configs'] }),
  });
  return (
    <ListPage
      title="Score configs"
      intro="What a score of each name may be; the trace page offers these for annotation."
      newLabel="New config"
      form={(close) => <NewConfigForm onCreated={close} />}
    >
      {archive.isError && <ErrorState error={archive.error} />}
      <Loaded query={configs} loading="Loading score configs…" empty="No score configs yet.">
        {(list) => (
          <RecordTable label="Score configs" columns={['Name', 'Type', 'Values', 'Better', 'Description', 'Created']}>
            {list.map((c) => (
              <tr key={c.id} data-config={c.name} className={c.archived ? 'muted' : undefined}>
                <td>
                  <Clipped text={c.name} inCell /> {c.archived && <span className="badge">archived</span>}
                </td>
                <td>{c.dataType}</td>
                <td>
                  <Clipped text={describe(c)} inCell />
                </td>
                <td>{c.higherIsBetter ? 'higher' : 'lower'}</td>
                <td className="muted">{c.description ? <Clipped text={c.description} inCell /> : '—'}</td>
                <td className="muted small">{formatTime(c.createdAt)}</td>
                <td>
                  <button
                    className="button small"
                    disabled={archive.isPending}
                    onClick={() => archive.mutate({ id: c.id, archived: !c.archived })}
                    aria-label={`${c.archived ? 'Restore' : 'Archive'} ${c.name}`}
                  >
                    {c.archived ? 'Restore' : 'Archive'}
                  </button>
                </td>
              </tr>
            ))}
          </RecordTable>
        )}
      </Loaded>
    </ListPage>
  );
}
