import type { UseQueryResult } from '@tanstack/react-query';
import type { Stats, StatsGroupBy } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { formatDuration } from '../../lib/timeline';
import { formatInt, formatUsd } from '../../lib/format';
import { Clipped } from '../../components/Clipped';

export const groupBys: StatsGroupBy[] = ['model', 'provider', 'kind', 'source', 'user', 'session', 'tag', 'name'];

/** The figures of a group, one column each after the group's name. */
const columns: { header: string; cell: (g: Stats['groups'][number]) => string }[] = [
  { header: 'Traces', cell: (g) => formatInt(g.traceCount) },
  { header: 'Spans', cell: (g) => formatInt(g.spanCount) },
  { header: 'Errors', cell: (g) => formatInt(g.errorCount) },
  { header: 'Tokens', cell: (g) => formatInt(g.totalTokens) },
  { header: 'Cost', cell: (g) => formatUsd(g.costUsd) },
  { header: 'p50', cell: (g) => formatDuration(g.latencyMs.p50) },
  { header: 'p95', cell: (g) => formatDuration(g.latencyMs.p95) },
];

/** The stats table: one row per group of the chosen dimension, with a picker for the dimension. */
export function DashboardStats({
  stats,
  groupBy,
  setGroupBy,
}: {
  stats: UseQueryResult<Stats>;
  groupBy: StatsGroupBy;
  setGroupBy: (value: string) => void;
}) {
  return (
    <section className="card" aria-label="Stats">
      <div className="card-head">
        <h2>Stats by {groupBy}</h2>
        <label className="field inline">
          <span>Group by</span>
          <select value={groupBy} onChange={(e) => setGroupBy(e.target.value)}>
            {groupBys.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
      </div>
      {stats.isError ? (
        <ErrorState error={stats.error} retry={() => stats.refetch()} />
      ) : !stats.data ? (
        <Loading />
      ) : (
        <table className="table" aria-label={`Stats by ${groupBy}`}>
          <thead>
            <tr>
              <th scope="col">{groupBy}</th>
              {columns.map((c) => (
                <th key={c.header} scope="col" className="num">
                  {c.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {stats.data.groups.length === 0 && (
              <tr>
                <td colSpan={columns.length + 1} className="muted center">
                  Nothing in this window.
                </td>
              </tr>
            )}
            {stats.data.groups.map((g) => (
              <tr key={g.key ?? '(none)'} data-group={g.key ?? ''}>
                <td>{g.key !== null ? <Clipped text={g.key} inCell /> : <span className="muted">(none)</span>}</td>
                {columns.map((c) => (
                  <td key={c.header} className="num">
                    {c.cell(g)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
