import type { ReactNode } from 'react';

/** The table of a list page: its column headings (and a last one for each row's buttons, named for screen readers), then the rows. */
export function RecordTable({
  label,
  columns,
  actions = true,
  children,
}: {
  label: string;
  columns: string[];
  actions?: boolean;
  children: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table className="table" aria-label={label}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
