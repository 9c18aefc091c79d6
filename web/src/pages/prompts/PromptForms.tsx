import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { NewVersionBody, Prompt } from '../../api/types';
import { ErrorState } from '../../components/states';
import { bumpVersion, parseVersion, templateVariables, type Bump } from '../../lib/semver';

/** Creates a version from the latest: a bump or an explicit number, the changed fields, latest or not. */
export function NewVersionForm({ base, onCreated }: { base: Prompt; onCreated: (created: Prompt) => void }) {
  const queryClient = useQueryClient();
  const [bump, setBump] = useState<Bump | 'explicit'>('patch');
  const [explicit, setExplicit] = useState('');
  const [systemPrompt, setSystemPrompt] = useState(base.systemPrompt);
  const [humanPrompt, setHumanPrompt] = useState(base.humanPrompt ?? '');
  const [description, setDescription] = useState('');
  const [isLatest, setIsLatest] = useState(true);
  const newVersion = bump === 'explicit' ? explicit.trim() : bumpVersion(base.version, bump);
  const create = useMutation({
    mutationFn: (body: NewVersionBody) => call(api.POST('/api/prompt/{id}/versions', { params: { path: { id: String(base.id) } }, body })),
    onSuccess: async (body) => {
      await queryClient.invalidateQueries({ queryKey: ['prompts'] });
      onCreated(body.data);
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const changes: NewVersionBody['changes'] = { isLatest };
    if (systemPrompt !== base.systemPrompt) changes.systemPrompt = systemPrompt;
    if (humanPrompt !== (base.humanPrompt ?? '')) changes.humanPrompt = humanPrompt || null;
    if (description) changes.description = description;
    create.mutate({ newVersion, changes });
  }

  return (
    <form className="card form" onSubmit={submit} aria-label="New version">
      <h2>New version of {base.name}</h2>
      <fieldset className="bump">
        <legend>Version (from v{base.version})</legend>
        {(['patch', 'minor', 'major'] as const).map((b) => (
          <label key={b} className="radio">
            <input type="radio" name="bump" checked={bump === b} onChange={() => setBump(b)} /> {b} → v{bumpVersion(base.version, b)}
          </label>
        ))}
        <label className="radio">
          <input type="radio" name="bump" checked={bump === 'explicit'} onChange={() => setBump('explicit')} /> explicit
          <input
            className="inline-input"
            aria-label="Explicit version"
            value={explicit}
            placeholder="2.0.0"
            disabled={bump !== 'explicit'}
            onChange={(e) => setExplicit(e.target.value)}
          />
        </label>
      </fieldset>
      <label className="field">
        <span>System template</span>
        <textarea rows={6} value={systemPrompt} onChange={(e) => setSystemPrompt(e.target.value)} />
      </label>
      <label className="field">
        <span>Human template</span>
        <textarea rows={3} value={humanPrompt} onChange={(e) => setHumanPrompt(e.target.value)} />
      </label>
      <label className="field">
        <span>What changed</span>
        <input value={description} onChange={(e) => setDescription(e.target.value)} placeholder="Describe the change" />
      </label>
      <label className="radio">
        <input type="checkbox" checked={isLatest} onChange={(e) => setIsLatest(e.target.checked)} /> Make it the latest version
      </label>
      {create.isError && <ErrorState error={create.error} />}
      <div className="form-actions">
        <button className="button primary" type="submit" disabled={create.isPending || !parseVersion(newVersion)}>
          {create.isPending ? 'Creating…' : `Create v${newVersion || '?'}`}
        </button>
      </div>
    </form>
  );
}

/** Fills the version's templates through the API and names the variables left out. */
export function RenderPreview({ prompt }: { prompt: Prompt }) {
  const names = [...new Set([...templateVariables(prompt.systemPrompt), ...templateVariables(prompt.humanPrompt)])];
  const [values, setValues] = useState<Record<string, string>>({});
  const render = useMutation({
    mutationFn: (variables: Record<string, string>) =>
      call(api.POST('/api/prompt/{id}/render', { params: { path: { id: String(prompt.id) } }, body: { variables } })),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    const variables = Object.fromEntries(Object.entries(values).filter(([k, v]) => names.includes(k) && v !== ''));
    render.mutate(variables);
  }
  const result = render.data?.data;
  return (
    <section className="card" aria-label="Render preview">
      <h2>Render v{prompt.version}</h2>
      <form className="render-form" onSubmit={submit}>
        {names.length === 0 && <p className="muted small">This version has no variables.</p>}
        {names.map((n) => (
          <label className="field" key={n}>
            <span>{n}</span>
            <input value={values[n] ?? ''} onChange={(e) => setValues({ ...values, [n]: e.target.value })} />
          </label>
        ))}
        <div className="form-actions">
          <button className="button" type="submit" disabled={render.isPending}>
            Render
          </button>
        </div>
      </form>
      {render.isError && <ErrorState error={render.error} />}
      {result && (
        <div className="rendered" data-testid="rendered">
          {result.missing.length > 0 && (
            <div className="alert alert-warn" role="status">
              Missing variables:{' '}
              {result.missing.map((m) => (
                <code key={m}>{m}</code>
              ))}
            </div>
          )}
          <h4>System</h4>
          <pre className="text-block">{result.systemPrompt}</pre>
          {result.humanPrompt !== null && (
            <>
              <h4>Human</h4>
              <pre className="text-block">{result.humanPrompt}</pre>
            </>
          )}
        </div>
      )}
    </section>
  );
}
