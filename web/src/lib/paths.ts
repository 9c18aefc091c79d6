/**
 * The console's paths of one item (a trace, a session, a user, a prompt), built from user data.
 *
 * A value becomes one path segment: encodeURIComponent escapes "/", "?", "#" and "%", but not
 * ".", and a segment "." or ".." is resolved away by every URL parser (even written "%2e%2e"):
 * `/sessions/..` is `/`. So such a value, and any value starting with "~", is written with one
 * "~" in front, which `segmentValue` removes again: "..", "~.." and "~x" become "~..", "~~.."
 * and "~~x". Every other value keeps its plain encoding.
 */

const escapeMark = '~';

/** One path segment holding `value` exactly. */
export function pathSegment(value: string): string {
  const encoded = encodeURIComponent(value);
  return value === '.' || value === '..' || value.startsWith(escapeMark) ? `${escapeMark}${encoded}` : encoded;
}

/** The value a segment of `pathSegment` holds; the segment as it is in the URL (still encoded). */
export function segmentValue(segment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    decoded = segment; // a malformed escape typed by hand: the text as it is
  }
  return decoded.startsWith(escapeMark) ? decoded.slice(escapeMark.length) : decoded;
}

export type ItemCollection = 'traces' | 'sessions' | 'users' | 'prompts' | 'datasets';

/** The page of one item: `/sessions/<segment>`. */
export function itemPath(collection: ItemCollection, value: string): string {
  return `/${collection}/${pathSegment(value)}`;
}

/** A run of a dataset: `/datasets/<id>/runs/<runId>`, the URL the SDKs print after an experiment. */
export function runPath(datasetId: string, runId: string): string {
  return `${itemPath('datasets', datasetId)}/runs/${pathSegment(runId)}`;
}

/** Runs of a dataset side by side, the first the baseline: `/datasets/<id>/compare?runs=a,b`. */
export function comparePath(datasetId: string, runIds: readonly string[]): string {
  return `${itemPath('datasets', datasetId)}/compare?runs=${runIds.map(encodeURIComponent).join(',')}`;
}

/** A span of a trace: the trace page with the span selected. */
export function spanPath(traceId: string, spanId: string | null | undefined): string {
  return spanId ? `${itemPath('traces', traceId)}?span=${encodeURIComponent(spanId)}` : itemPath('traces', traceId);
}

/**
 * The item a pathname names, read from the pathname as the browser has it (still encoded):
 * the router's own decoding turns an encoded "%2F" back into "/" before the value is split, so
 * "a%2Fb" typed as a value would not come back whole from it.
 */
export function itemOfPath(pathname: string, collection: ItemCollection): string | undefined {
  const [, first, segment, ...rest] = pathname.split('/');
  if (first !== collection || segment === undefined || segment === '' || rest.some((r) => r !== '')) return undefined;
  return segmentValue(segment);
}
