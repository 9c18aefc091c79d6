import { useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { Evaluator, NewEvaluator } from '../../api/types';
import {
  bodyOf,
  checkTypes,
  initialState,
  targetKinds,
  type CheckType,
  type EvaluatorFormState,
  type TargetKind,
} from '../../lib/evaluator-form';
import { ErrorState } from '../../components/states';
import { templateVariables } from '../../lib/semver';
import { useModelConnections } from './ModelConnections';

/**
 * The evaluator form: a judge prompt from prompt management or a built-in check, the mapping of
 * the judge's variables, sampling and filters, and a preview on a chosen trace (nothing stored)
 * before it is saved.
 */

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="field">
      <span>{label}</span>
      {children}
    </label>
  );
}

/** The versions of the chosen prompt: labels and versions to pin, and the variables to map. */
function usePromptVersions(name: string) {
  return useQuery({
    queryKey: ['prompt-versions', name],
    enabled: name !== '',
    queryFn: () => call(api.GET('/api/prompt/', { params: { query: { name, limit: 200 } } })),
    select: (b) => b.data,
  });
}

const targetFields = ['input', 'output', 'expectedOutput', 'metadata.', 'attributes.'];

/** The preview: runs the form's definition once on a chosen trace, storing nothing. */
function Preview({ body }: { body: () => NewEvaluator }) {
  const [traceId, setTraceId] = useState('');
  const [spanId, setSpanId] = useState('');
  const recent = useQuery({
    queryKey: ['preview-traces'],
    queryFn: () => call(api.GET('/api/traces/', { params: { query: { limit: 20 } } })),
    select: (b) => b.data,
  });
  const preview = useMutation({
    mutationFn: () =>
      call(api.POST('/api/evaluators/preview', { body: { ...body(), traceId, ...(spanId.trim() ? { spanId: spanId.trim() } : {}) } })),
  });
  return (
    <section className="card" aria-label="Preview on a trace">
      <h2>Preview on a trace</h2>
      <p className="muted small">Runs this definition once on the trace and shows the score it would give. Nothing is stored.</p>
      <div className="filters">
        <Field label="Trace id">
          <input value={traceId} onChange={(e) => setTraceId(e.target.value)} list="preview-trace-ids" />
        </Field>
        <datalist id="preview-trace-ids">
          {(recent.data ?? []).map((t) => (
            <option key={t.traceId} value={t.traceId}>
              {t.name}
            </option>
          ))}
        </datalist>
        <Field label="Span id (optional)">
          <input value={spanId} onChange={(e) => setSpanId(e.target.value)} />
        </Field>
        <div className="filter-actions">
          <button type="button" className="button" disabled={traceId.trim() === '' || preview.isPending} onClick={() => preview.mutate()}>
            {preview.isPending ? 'Running…' : 'Run preview'}
          </button>
        </div>
      </div>
      {preview.isError && <ErrorState error={preview.error} />}
      {preview.data && (
        <dl className="metrics" aria-label="Preview result">
          <div>
            <dt>{preview.data.data.name}</dt>
            <dd data-preview-value>{preview.data.data.stringValue ?? preview.data.data.value}</dd>
          </div>
          <div>
            <dt>Comment</dt>
            <dd>{preview.data.data.comment}</dd>
          </div>
        </dl>
      )}
    </section>
  );
}

export function EvaluatorForm({ evaluator, onSaved }: { evaluator?: Evaluator; onSaved: (saved: Evaluator) => void }) {
  const [state, setState] = useState<EvaluatorFormState>(() => initialState(evaluator));
  const [startActive, setStartActive] = useState(true);
  const set = <K extends keyof EvaluatorFormState>(key: K, value: EvaluatorFormState[K]) => setState((s) => ({ ...s, [key]: value }));
  const connections = useModelConnections();
  const prompts = useQuery({
    queryKey: ['prompts', 'latest'],
    queryFn: () => call(api.GET('/api/prompt/', { params: { query: { isLatest: 'true', limit: 200 } } })),
    select: (b) => b.data,
  });
  const versions = usePromptVersions(state.promptName);
  const pinned = (versions.data ?? []).find((v) =>
    state.promptRef.startsWith('label:')
      ? v.labels.includes(state.promptRef.slice(6))
      : state.promptRef.startsWith('version:')
        ? v.version === state.promptRef.slice(8)
        : v.isLatest,
  );
  const variableNames = pinned ? [...new Set([...templateVariables(pinned.systemPrompt), ...templateVariables(pinned.humanPrompt)])] : [];
  const labels = [...new Set((versions.data ?? []).flatMap((v) => v.labels))];

  const save = useMutation({
    mutationFn: async (body: NewEvaluator) => {
      if (evaluator) return call(api.PUT('/api/evaluators/{id}', { params: { path: { id: evaluator.id } }, body }));
      const created = await call(api.POST('/api/evaluators/', { body }));
      if (startActive) return created;
      return call(api.POST('/api/evaluators/{id}/pause', { params: { path: { id: created.data.id } } }));
    },
    onSuccess: (saved) => onSaved(saved.data),
  });
  const body = () => bodyOf(state, variableNames);
  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate(body());
  }
  const isJudge = state.type === 'llm_judge';
  const usesPrompt = isJudge || state.checkType === 'output_schema';
  const checkUsesField = !['latency', 'cost'].includes(state.checkType);
  return (
    <>
      <form className="card form" onSubmit={submit} aria-label={evaluator ? 'Edit evaluator' : 'New evaluator'}>
        <div className="filters">
          <Field label="Name">
            <input value={state.name} onChange={(e) => set('name', e.target.value)} required maxLength={200} />
          </Field>
          <Field label="Kind">
            <select
              value={state.type}
              onChange={(e) => {
                const type = e.target.value as EvaluatorFormState['type'];
                setState((s) => ({ ...s, type, dataType: type === 'check' ? 'boolean' : 'numeric' }));
              }}
            >
              <option value="llm_judge">LLM judge</option>
              <option value="check">Built-in check</option>
            </select>
          </Field>
          {isJudge && (
            <>
              <Field label="Model connection">
                <select value={state.connectionId} onChange={(e) => set('connectionId', e.target.value)} required>
                  <option value="">Choose…</option>
                  {(connections.data ?? []).map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name} ({c.defaultModel})
                    </option>
                  ))}
                </select>
              </Field>
              <Field label="Model (optional)">
                <input value={state.model} onChange={(e) => set('model', e.target.value)} placeholder="the connection's default" />
              </Field>
            </>
          )}
          {!isJudge && (
            <Field label="Check">
              <select value={state.checkType} onChange={(e) => set('checkType', e.target.value as CheckType)}>
                {checkTypes.map((c) => (
                  <option key={c.type} value={c.type}>
                    {c.label}
                  </option>
                ))}
              </select>
            </Field>
          )}
          {usesPrompt && (
            <>
              <Field label={isJudge ? 'Judge prompt' : 'Prompt'}>
                <select
                  value={state.promptName}
                  onChange={(e) => setState((s) => ({ ...s, promptName: e.target.value, promptRef: '' }))}
                  required
                >
                  <option value="">Choose…</option>
                  {(prompts.data ?? []).map((p) => (
                    <option key={p.name} value={p.name}>
                      {p.name}
                    </option>
                  ))}
                </select>
              </Field>
              <Field label="Label or version">
                <select value={state.promptRef} onChange={(e) => set('promptRef', e.target.value)}>
                  <option value="">latest</option>
                  {labels.map((l) => (
                    <option key={l} value={`label:${l}`}>
                      label {l}
                    </option>
                  ))}
                  {(versions.data ?? []).map((v) => (
                    <option key={v.version} value={`version:${v.version}`}>
                      version {v.version}
                    </option>
                  ))}
                </select>
              </Field>
            </>
          )}
          {!isJudge && checkUsesField && (
            <Field label="Field">
              <input value={state.field} onChange={(e) => set('field', e.target.value)} list="evaluator-fields" required />
            </Field>
          )}
          {!isJudge && state.checkType === 'regex' && (
            <>
              <Field label="Pattern">
                <input value={state.pattern} onChange={(e) => set('pattern', e.target.value)} required />
              </Field>
              <Field label="Flags">
                <input value={state.flags} onChange={(e) => set('flags', e.target.value)} placeholder="i, m, s" pattern="[imsu]*" />
              </Field>
            </>
          )}
          {!isJudge && state.checkType === 'contains' && (
            <>
              <Field label="Text">
                <input value={state.text} onChange={(e) => set('text', e.target.value)} required />
              </Field>
              <label className="field toggle">
                <input type="checkbox" checked={state.caseSensitive} onChange={(e) => set('caseSensitive', e.target.checked)} />
                <span>Case sensitive</span>
              </label>
            </>
          )}
          {!isJudge && state.checkType === 'length' && (
            <Field label="Minimum length">
              <input type="number" min={0} value={state.min} onChange={(e) => set('min', e.target.value)} />
            </Field>
          )}
          {!isJudge && ['length', 'latency', 'cost'].includes(state.checkType) && (
            <Field label={state.checkType === 'latency' ? 'Maximum (ms)' : state.checkType === 'cost' ? 'Maximum (USD)' : 'Maximum length'}>
              <input
                type="number"
                min={0}
                step="any"
                value={state.max}
                onChange={(e) => set('max', e.target.value)}
                required={state.checkType !== 'length'}
              />
            </Field>
          )}
          <datalist id="evaluator-fields">
            {targetFields.map((f) => (
              <option key={f} value={f} />
            ))}
          </datalist>
        </div>
        {isJudge && (
          <fieldset className="filters" aria-label="Variable mapping">
            <legend>Variables of the judge prompt</legend>
            {variableNames.length === 0 && (
              <p className="muted small">{pinned ? 'This prompt version has no variables.' : 'Choose a judge prompt.'}</p>
            )}
            {variableNames.map((name) => (
              <Field key={name} label={`{${name}} from`}>
                <input
                  value={state.variables[name] ?? ''}
                  onChange={(e) => set('variables', { ...state.variables, [name]: e.target.value })}
                  list="evaluator-fields"
                  placeholder="input, output, metadata.…"
                  required
                />
              </Field>
            ))}
          </fieldset>
        )}
        <fieldset className="filters" aria-label="Score">
          <legend>Score it gives</legend>
          <Field label="Score name">
            <input value={state.scoreName} onChange={(e) => set('scoreName', e.target.value)} required maxLength={200} />
          </Field>
          <Field label="Score type">
            <select value={state.dataType} onChange={(e) => set('dataType', e.target.value as EvaluatorFormState['dataType'])}>
              <option value="numeric">numeric</option>
              <option value="boolean">boolean</option>
            </select>
          </Field>
        </fieldset>
        <fieldset className="filters" aria-label="Targets">
          <legend>What it judges</legend>
          <Field label="Targets">
            <select value={state.targetKind} onChange={(e) => set('targetKind', e.target.value as TargetKind)}>
              {targetKinds.map((t) => (
                <option key={t.kind} value={t.kind}>
                  {t.label}
                </option>
              ))}
            </select>
          </Field>
          {state.targetKind === 'runs' ? (
            <Field label="Dataset id">
              <input value={state.filterDatasetId} onChange={(e) => set('filterDatasetId', e.target.value)} placeholder="every dataset" />
            </Field>
          ) : (
            <>
              <Field label={state.targetKind === 'spans' ? 'Span name' : 'Trace name'}>
                <input value={state.filterName} onChange={(e) => set('filterName', e.target.value)} placeholder="any" />
              </Field>
              {state.targetKind === 'spans' && (
                <>
                  <Field label="Span kind">
                    <input
                      value={state.filterSpanKind}
                      onChange={(e) => set('filterSpanKind', e.target.value)}
                      placeholder="any, e.g. llm.chat"
                    />
                  </Field>
                  <Field label="Prompt name">
                    <input value={state.filterPromptName} onChange={(e) => set('filterPromptName', e.target.value)} placeholder="any" />
                  </Field>
                </>
              )}
              <Field label="Tags (comma separated)">
                <input value={state.filterTags} onChange={(e) => set('filterTags', e.target.value)} placeholder="any" />
              </Field>
              <Field label="Environment">
                <input value={state.filterEnvironment} onChange={(e) => set('filterEnvironment', e.target.value)} placeholder="any" />
              </Field>
            </>
          )}
          <Field label="Sampling rate (0–1)">
            <input
              type="number"
              min={0}
              max={1}
              step="any"
              value={state.samplingRate}
              onChange={(e) => set('samplingRate', e.target.value)}
              required
            />
          </Field>
          <Field label="Delay after the trace ends (s)">
            <input
              type="number"
              min={0}
              max={86400}
              value={state.delaySeconds}
              onChange={(e) => set('delaySeconds', e.target.value)}
              required
            />
          </Field>
        </fieldset>
        <div className="form-actions">
          {!evaluator && (
            <label className="toggle">
              <input type="checkbox" checked={startActive} onChange={(e) => setStartActive(e.target.checked)} />
              <span>Active at once</span>
            </label>
          )}
          <button className="button primary" type="submit" disabled={save.isPending}>
            {evaluator ? 'Save as a new version' : 'Create evaluator'}
          </button>
        </div>
        {save.isError && <ErrorState error={save.error} />}
      </form>
      <Preview body={body} />
    </>
  );
}
