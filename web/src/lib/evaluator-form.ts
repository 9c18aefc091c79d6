/**
 * The evaluator form's state (every field as the form edits it) and the API's body made from it.
 * Pure, without imports, so it is unit-tested without a browser: the shapes below are what it
 * reads and writes of the API's evaluator, and the page passes the API's own types through them
 * (a change of the API that breaks them fails the console's type check).
 */

interface PromptRef {
  name: string;
  label?: string;
  version?: string;
}
export type EvaluatorCheck =
  | { type: 'json_parse'; field?: string }
  | { type: 'regex'; field?: string; pattern: string; flags?: string }
  | { type: 'contains'; field?: string; text: string; caseSensitive?: boolean }
  | { type: 'length'; field?: string; min?: number; max?: number }
  | { type: 'latency'; maxMs: number }
  | { type: 'cost'; maxUsd: number }
  | { type: 'output_schema'; field?: string; prompt: PromptRef };
export interface EvaluatorDefinition {
  name: string;
  type: 'llm_judge' | 'check';
  judge?: { connectionId: string; model?: string; prompt: PromptRef; variables: Record<string, string> };
  check?: EvaluatorCheck;
  score: { name: string; dataType: 'numeric' | 'boolean' };
  target: {
    kind?: TargetKind;
    filters: { name?: string; tags?: string[]; environment?: string; spanKind?: string; promptName?: string; datasetId?: string };
    samplingRate: number;
    delaySeconds: number;
  };
}

/** What an evaluator judges: new traces, the spans of new traces, or experiment run items. */
export type TargetKind = 'traces' | 'spans' | 'runs';
export const targetKinds: { kind: TargetKind; label: string }[] = [
  { kind: 'traces', label: 'New traces' },
  { kind: 'spans', label: 'Spans of new traces' },
  { kind: 'runs', label: 'Experiment run items' },
];

export type CheckType = EvaluatorCheck['type'];
export const checkTypes: { type: CheckType; label: string }[] = [
  { type: 'json_parse', label: 'JSON parses' },
  { type: 'regex', label: 'Matches a pattern' },
  { type: 'contains', label: 'Contains text' },
  { type: 'length', label: 'Length within bounds' },
  { type: 'latency', label: 'Latency under' },
  { type: 'cost', label: 'Cost under' },
  { type: 'output_schema', label: "Valid against a prompt's output schema" },
];

/** Every field the form edits, as text; `bodyOf` turns it into the API's body. */
export interface EvaluatorFormState {
  name: string;
  type: EvaluatorDefinition['type'];
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
  targetKind: TargetKind;
  filterName: string;
  filterTags: string;
  filterEnvironment: string;
  /** Kind spans only. */
  filterSpanKind: string;
  filterPromptName: string;
  /** Kind runs only. */
  filterDatasetId: string;
  samplingRate: string;
  delaySeconds: string;
}

const refOf = (ref: { label?: string; version?: string } | undefined) =>
  ref?.label ? `label:${ref.label}` : ref?.version ? `version:${ref.version}` : '';

export function initialState(evaluator: EvaluatorDefinition | undefined): EvaluatorFormState {
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
    targetKind: evaluator?.target.kind ?? 'traces',
    filterName: evaluator?.target.filters.name ?? '',
    filterTags: (evaluator?.target.filters.tags ?? []).join(', '),
    filterEnvironment: evaluator?.target.filters.environment ?? '',
    filterSpanKind: evaluator?.target.filters.spanKind ?? '',
    filterPromptName: evaluator?.target.filters.promptName ?? '',
    filterDatasetId: evaluator?.target.filters.datasetId ?? '',
    samplingRate: String(evaluator?.target.samplingRate ?? 1),
    delaySeconds: String(evaluator?.target.delaySeconds ?? 30),
  };
}

function promptRefBody(state: EvaluatorFormState) {
  const [kind, value] = [state.promptRef.slice(0, state.promptRef.indexOf(':')), state.promptRef.slice(state.promptRef.indexOf(':') + 1)];
  return {
    name: state.promptName,
    ...(kind === 'label' ? { label: value } : kind === 'version' ? { version: value } : {}),
  };
}

function checkBody(state: EvaluatorFormState): EvaluatorCheck {
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

/** The filters the target's kind takes (run items are chosen by dataset only). */
function filtersBody(state: EvaluatorFormState, tags: string[]): EvaluatorDefinition['target']['filters'] {
  const text = (value: string) => value.trim();
  if (state.targetKind === 'runs') return text(state.filterDatasetId) ? { datasetId: text(state.filterDatasetId) } : {};
  return {
    ...(text(state.filterName) ? { name: text(state.filterName) } : {}),
    ...(tags.length > 0 ? { tags } : {}),
    ...(text(state.filterEnvironment) ? { environment: text(state.filterEnvironment) } : {}),
    ...(state.targetKind === 'spans' && text(state.filterSpanKind) ? { spanKind: text(state.filterSpanKind) } : {}),
    ...(state.targetKind === 'spans' && text(state.filterPromptName) ? { promptName: text(state.filterPromptName) } : {}),
  };
}

/** The API's body; the judge maps exactly the variables of its prompt version (`variableNames`). */
export function bodyOf(state: EvaluatorFormState, variableNames: string[]): EvaluatorDefinition {
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
      kind: state.targetKind,
      filters: filtersBody(state, tags),
      samplingRate: Number(state.samplingRate),
      delaySeconds: Number(state.delaySeconds),
    },
  };
}
