import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import { useListMutation } from '../../api/list-mutation';
import type { ConnectionTest, ModelConnection, NewModelConnection } from '../../api/types';
import { ErrorState } from '../../components/states';
import { Clipped } from '../../components/Clipped';
import { RecordTable } from '../../components/RecordTable';
import { ListPage } from '../../components/ListPage';
import { formatTime } from '../../lib/format';
import { formText } from '../../lib/form';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Loaded } from '../../components/Loaded';

/** The workspace's model connections, by name (shared by the evaluator form's connection picker). */
export function useModelConnections() {
  return useQuery({
    queryKey: ['model-connections'],
    queryFn: () => call(api.GET('/api/model-connections/')),
    select: (b) => b.data,
  });
}

function NewConnectionForm({ onCreated }: { onCreated: () => void }) {
  const create = useListMutation(
    'model-connections',
    (body: NewModelConnection) => call(api.POST('/api/model-connections/', { body })),
    onCreated,
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = formText(event.currentTarget);
    const temperature = text('temperature');
    create.mutate({
      name: text('name'),
      provider: text('provider') === 'anthropic' ? 'anthropic' : 'openai',
      baseUrl: text('baseUrl'),
      apiKey: text('apiKey'),
      defaultModel: text('defaultModel'),
      parameters: temperature === '' ? {} : { temperature: Number(temperature) },
    });
  }
  return (
    <form className="card filters" onSubmit={submit} aria-label="New model connection">
      <label className="field">
        <span>Name</span>
        <input name="name" required maxLength={200} placeholder="judge" />
      </label>
      <label className="field">
        <span>Provider</span>
        <select name="provider" defaultValue="openai">
          <option value="openai">OpenAI-compatible</option>
          <option value="anthropic">Anthropic</option>
        </select>
      </label>
      <label className="field">
        <span>Base URL</span>
        <input name="baseUrl" required maxLength={2000} placeholder="https://api.openai.com/v1" />
      </label>
      <label className="field">
        <span>API key</span>
        <input name="apiKey" type="password" required maxLength={1000} autoComplete="off" />
      </label>
      <label className="field">
        <span>Default model</span>
        <input name="defaultModel" required maxLength={200} placeholder="gpt-4o-mini" />
      </label>
      <label className="field">
        <span>Temperature</span>
        <input name="temperature" type="number" step="any" min={0} max={2} />
      </label>
      <div className="filter-actions">
        <button className="button primary" type="submit" disabled={create.isPending}>
          Create connection
        </button>
      </div>
      {create.isError && <ErrorState error={create.error} />}
    </form>
  );
}

function TestOutcome({ outcome }: { outcome: ConnectionTest }) {
  return outcome.ok ? (
    <p className="small" role="status">
      <span className="badge status-ok">ok</span> <Clipped text={outcome.answer ?? ''} />
    </p>
  ) : (
    <p className="small text-error" role="status">
      {outcome.statusCode !== null && <span className="badge status-error">{outcome.statusCode}</span>} {outcome.error}
    </p>
  );
}

function ConnectionRow({ connection }: { connection: ModelConnection }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const test = useMutation({
    mutationFn: () => call(api.POST('/api/model-connections/{id}/test', { params: { path: { id: connection.id } } })),
  });
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/model-connections/{id}', { params: { path: { id: connection.id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['model-connections'] }),
  });
  return (
    <tr data-connection={connection.name}>
      <td>
        <Clipped text={connection.name} inCell />
      </td>
      <td>{connection.provider}</td>
      <td>
        <Clipped text={connection.baseUrl} inCell />
      </td>
      <td>
        <Clipped text={connection.defaultModel} inCell />
      </td>
      <td>
        <code aria-label="Key ending">…{connection.apiKeyTail}</code>
      </td>
      <td className="muted small">{formatTime(connection.createdAt)}</td>
      <td>
        <div className="button-row">
          <button className="button small" disabled={test.isPending} onClick={() => test.mutate()} aria-label={`Test ${connection.name}`}>
            {test.isPending ? 'Testing…' : 'Test'}
          </button>
          <button className="button small" onClick={() => setConfirming(true)} aria-label={`Delete ${connection.name}`}>
            Delete
          </button>
        </div>
        {test.data && <TestOutcome outcome={test.data.data} />}
        {test.isError && <ErrorState error={test.error} />}
        {confirming && (
          <ConfirmDialog
            title="Delete this model connection?"
            pending={remove.isPending}
            error={remove.error}
            onCancel={() => setConfirming(false)}
            onConfirm={() => remove.mutate()}
          >
            <p>
              “<Clipped text={connection.name} />” and its stored key are deleted. An evaluator that uses it must be changed first.
            </p>
          </ConfirmDialog>
        )}
      </td>
    </tr>
  );
}

/** Settings → Model connections: the judges' models; a key is shown only by its last 4 characters. */
export function ModelConnectionsPage() {
  const connections = useModelConnections();
  return (
    <ListPage
      title="Model connections"
      intro="The models that judge traces for evaluators. Keys are stored encrypted and never shown again."
      newLabel="New connection"
      form={(close) => <NewConnectionForm onCreated={close} />}
    >
      <Loaded query={connections} loading="Loading model connections…" empty={<>No model connections yet.</>}>
        {(items) => (
          <RecordTable label="Model connections" columns={['Name', 'Provider', 'Base URL', 'Default model', 'Key', 'Created']}>
            {items.map((c) => (
              <ConnectionRow key={c.id} connection={c} />
            ))}
          </RecordTable>
        )}
      </Loaded>
    </ListPage>
  );
}
