import { useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';
import type { Evaluator, EvaluatorCheck, NewEvaluator } from '../api/types';
import { ErrorState } from '../components/states';
import { templateVariables } from '../lib/semver';
import { useModelConnections } from './ModelConnections';

/**
 * The evaluator form: a judge prompt from prompt management or a built-in check, the mapping of
 * the judge's variables, sampling and filters, and a preview on a chosen trace (nothing stored)
 * before it is saved.
 */

type CheckType = EvaluatorCheck['type'];
const checkTypes: { type: CheckType; label: string }[] = [
  { type: 'json_parse', label: 'JSON parses' },
  { type: 'regex', label: 'Matches a pattern' },
  { type: 'contains', label: 'Contains text' },
  { type: 'length', label: 'Length within bounds' },
  { type: 'latency', label: 'Latency under' },
  { type: 'cost', label: 'Cost under' },
  { type: 'output_schema', label: "Valid against a prompt's output schema" },
];

/** Every field the form edits, as text; `bodyOf` turns it into the API's body. */
interface FormState {
  name: string;
  type: NewEvaluator['type'];
  connectionId: string;
  model: string;
  promptName: string;
  /** `''` (latest), `label:<name>` or `version:<v>`. */
  promptRef: string;
  variables: Record<string, string>;
  checkType: CheckType;
  field: string;
  pattern: string;
  flags: string;
  text: string;
  caseSensitive: boolean;
  min: string;
  max: string;
  scoreName: string;
  dataType: 'numeric' | 'boolean';
  filterName: string;
  filterTags: string;
  filterEnvironment: string;
  samplingRate: string;
  delaySeconds: string;
}

const refOf = (ref: { label?: string; version?: string } | undefined) =>
  ref?.label ? `label:${ref.label}` : ref?.version ? `version:${ref.version}` : '';

function initialState(evaluator: Evaluator | undefined): FormState {
  const check = evaluator?.check as Partial<Record<string, unknown>> | undefined;
  const str = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
  const bound = check?.type === 'latency' ? check.maxMs : check?.type === 'cost' ? check.maxUsd : check?.max;
  return {
    name: evaluator?.name ?? '',
    type: evaluator?.type ?? 'llm_judge',
    connectionId: evaluator?.judge?.connectionId ?? '',
    model: evaluator?.judge?.model ?? '',
    promptName: evaluator?.judge?.prompt.name ?? (evaluator?.check?.type === 'output_schema' ? evaluator.check.prompt.name : ''),
    promptRef: refOf(evaluator?.judge?.prompt ?? (evaluator?.check?.type === 'output_schema' ? evaluator.check.prompt : undefined)),
    variables: evaluator?.judge?.variables ?? {},
    checkType: evaluator?.check?.type ?? 'json_parse',
    field: str(check?.field) || 'output',
    pattern: str(check?.pattern),
    flags: str(check?.flags),
    text: str(check?.text),
    caseSensitive: check?.caseSensitive !== false,
    min: str(check?.min),
    max: str(bound),
    scoreName: evaluator?.score.name ?? '',
    dataType: evaluator?.score.dataType ?? 'numeric',
    filterName: evaluator?.target.filters.name ?? '',
    filterTags: (evaluator?.target.filters.tags ?? []).join(', '),
    filterEnvironment: evaluator?.target.filters.environment ?? '',
    samplingRate: String(evaluator?.target.samplingRate ?? 1),
    delaySeconds: String(evaluator?.target.delaySeconds ?? 30),
  };
}

function promptRefBody(state: FormState) {
  const [kind, value] = [state.promptRef.slice(0, state.promptRef.indexOf(':')), state.promptRef.slice(state.promptRef.indexOf(':') + 1)];
  return {
    name: state.promptName,
    ...(kind === 'label' ? { label: value } : kind === 'version' ? { version: value } : {}),
  };
}

function checkBody(state: FormState): EvaluatorCheck {
  const num = (text: string) => (text.trim() === '' ? undefined : Number(text));
  switch (state.checkType) {
    case 'json_parse':
      return { type: 'json_parse', field: state.field };
    case 'regex':
      return { type: 'regex', field: state.field, pattern: state.pattern, ...(state.flags ? { flags: state.flags } : {}) };
    case 'contains':
      return { type: 'contains', field: state.field, text: state.text, caseSensitive: state.caseSensitive };
    case 'length':
      return { type: 'length', field: state.field, min: num(state.min), max: num(state.max) };
    case 'latency':
      return { type: 'latency', maxMs: Number(state.max) };
    case 'cost':
      return { type: 'cost', maxUsd: Number(state.max) };
    case 'output_schema':
      return { type: 'output_schema', field: state.field, prompt: promptRefBody(state) };
  }
}

/** The API's body; the judge maps exactly the variables of its prompt version (`variableNames`). */
function bodyOf(state: FormState, variableNames: string[]): NewEvaluator {
  const tags = state.filterTags
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return {
    name: state.name,
    type: state.type,
    ...(state.type === 'llm_judge'
      ? {
          judge: {
            connectionId: state.connectionId,
            ...(state.model.trim() ? { model: state.model.trim() } : {}),
            prompt: promptRefBody(state),
            variables: Object.fromEntries(variableNames.map((n) => [n, state.variables[n] ?? ''])),
          },
        }
      : { check: checkBody(state) }),
    score: { name: state.scoreName, dataType: state.dataType },
    target: {
      kind: 'traces',
      filters: {
        ...(state.filterName.trim() ? { name: state.filterName.trim() } : {}),
        ...(tags.length > 0 ? { tags } : {}),
        ...(state.filterEnvironment.trim() ? { environment: state.filterEnvironment.trim() } : {}),
      },
      samplingRate: Number(state.samplingRate),
      delaySeconds: Number(state.delaySeconds),
    },
  };
}

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
  const [state, setState] = useState<FormState>(() => initialState(evaluator));
  const [startActive, setStartActive] = useState(true);
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => setState((s) => ({ ...s, [key]: value }));
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
                const type = e.target.value as FormState['type'];
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
            <select value={state.dataType} onChange={(e) => set('dataType', e.target.value as FormState['dataType'])}>
              <option value="numeric">numeric</option>
              <option value="boolean">boolean</option>
            </select>
          </Field>
        </fieldset>
        <fieldset className="filters" aria-label="Targets">
          <legend>Which new traces</legend>
          <Field label="Trace name">
            <input value={state.filterName} onChange={(e) => set('filterName', e.target.value)} placeholder="any" />
          </Field>
          <Field label="Tags (comma separated)">
            <input value={state.filterTags} onChange={(e) => set('filterTags', e.target.value)} placeholder="any" />
          </Field>
          <Field label="Environment">
            <input value={state.filterEnvironment} onChange={(e) => set('filterEnvironment', e.target.value)} placeholder="any" />
          </Field>
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
