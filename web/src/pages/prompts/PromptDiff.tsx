import { diffLines, diffJson } from 'diff';
import type { Prompt } from '../../api/types';

type FieldDiffProps = { label: string } & (
  | { json: true; before: object | null | undefined; after: object | null | undefined }
  | { json?: false; before: string | null | undefined; after: string | null | undefined }
);
/** Line diffs of two versions' templates, output schema and metadata (loaded on demand). */
function FieldDiff({ label, ...field }: FieldDiffProps) {
  const changes = field.json
    ? diffJson(field.before ?? {}, field.after ?? {})
    : // Both end in a newline, so a last line that only gained a successor is not shown as changed.
      diffLines(`${field.before ?? ''}\n`, `${field.after ?? ''}\n`);
  const changed = changes.some((c) => c.added || c.removed);
  return (
    <section className="diff-field">
      <h4>
        {label} {!changed && <span className="muted small">unchanged</span>}
      </h4>
      {changed && (
        <pre className="diff" aria-label={`Changes of ${label}`}>
          {changes.map((c, i) => (
            <span key={i} className={c.added ? 'diff-add' : c.removed ? 'diff-del' : 'diff-same'}>
              {c.value
                .replace(/\n$/, '')
                .split('\n')
                .map((line) => `${c.added ? '+ ' : c.removed ? '- ' : '  '}${line}`)
                .join('\n')}
              {'\n'}
            </span>
          ))}
        </pre>
      )}
    </section>
  );
}

export default function PromptDiff({ from, to }: { from: Prompt; to: Prompt }) {
  return (
    <div className="diffs" data-testid="prompt-diff">
      <FieldDiff label="System template" before={from.systemPrompt} after={to.systemPrompt} />
      <FieldDiff label="Human template" before={from.humanPrompt} after={to.humanPrompt} />
      <FieldDiff label="Output schema" before={from.outputSchema} after={to.outputSchema} json />
      <FieldDiff label="Metadata" before={from.metadata} after={to.metadata} json />
      <FieldDiff label="Description" before={from.description} after={to.description} />
    </div>
  );
}
