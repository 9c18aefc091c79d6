/**
 * The trace list's view in the URL, so a view can be shared: filters, sort, page. Only known
 * keys with non-empty values are kept. Pure.
 */

export const traceFilterKeys = [
  'q',
  'status',
  'source',
  'environment',
  'sessionId',
  'userId',
  'tag',
  'name',
  'model',
  'service',
  'minDurationMs',
  'minCostUsd',
  'score',
  'scoreMin',
  'scoreMax',
  'scoreValue',
  'startAfter',
  'startBefore',
] as const;
export type TraceFilterKey = (typeof traceFilterKeys)[number];

export const sortKeys = ['startTime', 'durationMs', 'totalTokens', 'costUsd', 'spanCount', 'errorCount'] as const;
export type SortKey = (typeof sortKeys)[number];

export interface TraceView {
  filters: Partial<Record<TraceFilterKey, string>>;
  sort: SortKey;
  descending: boolean;
  page: number;
  pageSize: number;
}

export function parseTraceView(search: string | URLSearchParams): TraceView {
  const params = typeof search === 'string' ? new URLSearchParams(search) : search;
  const filters: TraceView['filters'] = {};
  for (const key of traceFilterKeys) {
    const value = params.get(key)?.trim();
    if (value) filters[key] = value;
  }
  const rawSort = params.get('sort') ?? '-startTime';
  const descending = rawSort.startsWith('-');
  const name = rawSort.replace(/^-/, '');
  const known = (sortKeys as readonly string[]).includes(name);
  const sort = known ? (name as SortKey) : 'startTime';
  const page = Math.max(1, Math.floor(Number(params.get('page') ?? '1')) || 1);
  const size = Number(params.get('pageSize') ?? '50');
  const pageSize = [20, 50, 100].includes(size) ? size : 50;
  return { filters, sort, descending: known ? descending : true, page, pageSize };
}

export function traceViewToSearch(view: TraceView): string {
  const params = new URLSearchParams();
  for (const key of traceFilterKeys) {
    const value = view.filters[key];
    if (value) params.set(key, value);
  }
  if (!(view.sort === 'startTime' && view.descending)) params.set('sort', `${view.descending ? '-' : ''}${view.sort}`);
  if (view.page > 1) params.set('page', String(view.page));
  if (view.pageSize !== 50) params.set('pageSize', String(view.pageSize));
  return params.toString();
}

/** Columns the API sorts by itself; the others sort the page in the browser. */
export const serverSortKeys: readonly SortKey[] = ['startTime', 'durationMs', 'costUsd'];

/** Sorts one page in the browser by a column the API cannot sort by (nulls last). */
export function sortRows<T>(rows: readonly T[], key: SortKey, descending: boolean): T[] {
  const get = (row: T) => {
    const value = (row as Record<string, unknown>)[key];
    if (typeof value === 'number') return value;
    if (typeof value === 'string') return Date.parse(value);
    return null;
  };
  return [...rows].sort((a, b) => {
    const x = get(a);
    const y = get(b);
    if (x === null && y === null) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return descending ? y - x : x - y;
  });
}
