/** Runs of a dataset side by side: where they disagree, and values as one short line. Pure. */

/** What of a run item the comparison looks at: failure and per score name its value. */
export interface ComparedRunItem {
  failed: boolean;
  scores: Record<string, number>;
}

/** Two score values of one item count as the same below this (they are means of a trace's scores). */
const tolerance = 1e-9;

/**
 * Whether the runs disagree on one item: a run lacks the item, one failed and another did not,
 * or a score name has different values (or a value in one run only). Outputs are not compared:
 * two model calls rarely word an answer alike, and the scores say whether that matters.
 */
export function runsDisagree(items: ReadonlyArray<ComparedRunItem | null>): boolean {
  const present = items.filter((i): i is ComparedRunItem => i !== null);
  if (present.length < items.length) return true;
  const [first, ...rest] = present;
  if (!first) return false;
  const names = new Set(present.flatMap((i) => Object.keys(i.scores)));
  return rest.some(
    (other) =>
      other.failed !== first.failed ||
      [...names].some((name) => {
        const a = first.scores[name];
        const b = other.scores[name];
        return a === undefined || b === undefined ? a !== b : Math.abs(a - b) > tolerance;
      }),
  );
}

/** A JSON value on one line, cut at `max` characters with an ellipsis: a table cell's preview. */
export function jsonPreview(value: unknown, max = 160): string {
  if (value === undefined) return '—';
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '—');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The score names of some run items, sorted: the columns of a run's items. */
export function scoreNamesOf(items: ReadonlyArray<{ scores: Record<string, number> } | null>): string[] {
  return [...new Set(items.flatMap((i) => (i ? Object.keys(i.scores) : [])))].sort();
}
