import type { UseQueryResult } from '@tanstack/react-query';
import type { Stats, StatsGroupBy } from '../api/types';
import { ErrorState, Loading } from '../components/states';
import { formatDuration } from '../lib/timeline';
import { formatInt, formatUsd } from '../lib/format';

export const groupBys: StatsGroupBy[] = ['model', 'provider', 'kind', 'source', 'user', 'session', 'tag', 'name'];

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
              <th scope="col" className="num">
                Traces
              </th>
              <th scope="col" className="num">
                Spans
              </th>
              <th scope="col" className="num">
                Errors
              </th>
              <th scope="col" className="num">
                Tokens
              </th>
              <th scope="col" className="num">
                Cost
              </th>
              <th scope="col" className="num">
                p50
              </th>
              <th scope="col" className="num">
                p95
              </th>
            </tr>
          </thead>
          <tbody>
            {stats.data.groups.length === 0 && (
              <tr>
                <td colSpan={8} className="muted center">
                  Nothing in this window.
                </td>
              </tr>
            )}
            {stats.data.groups.map((g) => (
              <tr key={g.key ?? '(none)'} data-group={g.key ?? ''}>
                <td>{g.key ?? <span className="muted">(none)</span>}</td>
                <td className="num">{formatInt(g.traceCount)}</td>
                <td className="num">{formatInt(g.spanCount)}</td>
                <td className="num">{formatInt(g.errorCount)}</td>
                <td className="num">{formatInt(g.totalTokens)}</td>
                <td className="num">{formatUsd(g.costUsd)}</td>
                <td className="num">{formatDuration(g.latencyMs.p50)}</td>
                <td className="num">{formatDuration(g.latencyMs.p95)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
