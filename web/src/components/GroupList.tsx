import type { ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { ErrorState, EmptyState, Loading } from './states';

/**
 * What the pages of groups of traces (sessions, users) share: a table described by its
 * columns, a list page paged by the API's cursor (kept in the URL, so a page can be shared),
 * and a row of totals.
 */

export interface Column<T> {
  header: string;
  /** Right-aligned figures. */
  numeric?: boolean;
  cell: (row: T) => ReactNode;
  /** Extra classes of the cell (an error count in red). */
  tone?: (row: T) => string | undefined;
}

export function DataTable<T>({
  label,
  rows,
  columns,
  rowKey,
  rowData,
  compact = false,
}: {
  label: string;
  rows: readonly T[];
  columns: ReadonlyArray<Column<T>>;
  rowKey: (row: T) => string;
  /** A `data-` attribute naming the row, for links and tests: [name, value]. */
  rowData?: (row: T) => [`data-${string}`, string];
  compact?: boolean;
}) {
  return (
    <table className={compact ? 'table compact' : 'table'} aria-label={label}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header} scope="col" className={c.numeric ? 'num' : undefined}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const data = rowData?.(row);
          return (
            <tr key={rowKey(row)} {...(data ? { [data[0]]: data[1] } : {})}>
              {columns.map((c) => {
                const className = [c.numeric ? 'num' : '', c.tone?.(row) ?? ''].filter(Boolean).join(' ');
                return (
                  <td key={c.header} className={className || undefined}>
                    {c.cell(row)}
                  </td>
                );
              })}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

interface CursorPage<T> {
  data: T[];
  meta: { pagination?: { nextCursor?: string | null } };
}

/** A list page of one kind of group: heading, loading, error and empty states, the table, the pager. */
export function CursorListPage<T>({
  title,
  description,
  queryKey,
  load,
  empty,
  table,
}: {
  title: string;
  description: string;
  queryKey: string;
  load: (cursor: string | undefined) => Promise<CursorPage<T>>;
  /** What to do to see something here. */
  empty: { title: string; hint: ReactNode };
  table: Omit<Parameters<typeof DataTable<T>>[0], 'rows' | 'label'>;
}) {
  const [params, setParams] = useSearchParams();
  const cursor = params.get('cursor') ?? undefined;
  const list = useQuery({ queryKey: [queryKey, cursor], queryFn: () => load(cursor) });
  const next = list.data?.meta.pagination?.nextCursor;
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>{title}</h1>
          <p className="muted">{description}</p>
        </div>
      </header>
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => list.refetch()} />
      ) : list.data.data.length === 0 ? (
        <EmptyState title={empty.title}>
          <p>{empty.hint}</p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <DataTable label={title} rows={list.data.data} {...table} />
          <nav className="pager" aria-label="Pages">
            {cursor && (
              <button className="button" onClick={() => setParams({})}>
                First page
              </button>
            )}
            {next && (
              <button className="button" onClick={() => setParams({ cursor: next })}>
                Next
              </button>
            )}
          </nav>
        </div>
      )}
    </div>
  );
}

export interface Total {
  label: string;
  value: ReactNode;
  /** `data-kpi` of the figure, for tests. */
  kpi?: string;
  error?: boolean;
}

/** A group's totals as a compact row of figures. */
export function Totals({ label, items }: { label: string; items: readonly Total[] }) {
  return (
    <dl className="kpis kpis-compact" aria-label={label}>
      {items.map((item) => (
        <div key={item.label}>
          <dt>{item.label}</dt>
          <dd data-kpi={item.kpi} className={item.error ? 'text-error' : undefined}>
            {item.value}
          </dd>
        </div>
      ))}
    </dl>
  );
}
