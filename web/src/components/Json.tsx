import { JsonView, collapseAllNested, defaultStyles } from 'react-json-view-lite';
import 'react-json-view-lite/dist/index.css';

/**
 * A collapsible JSON tree (first level open) for raw values, attributes and metadata. Numbers in
 * a darker blue than the package's (which is below the WCAG AA contrast on white).
 */
export function Json({ value, label }: { value: unknown; label: string }) {
  if (value === undefined) return null;
  if (value === null || typeof value !== 'object') {
    return (
      <pre className="code-block small" aria-label={label}>
        {JSON.stringify(value, null, 2)}
      </pre>
    );
  }
  return (
    <div className="json" aria-label={label}>
      <JsonView
        data={value}
        shouldExpandNode={collapseAllNested}
        style={{ ...defaultStyles, container: 'json-container', numberValue: 'json-number' }}
      />
    </div>
  );
}
