import { useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearchParams } from 'react-router';
import { getUser, listUserSessions, listUsers } from '../api/sessions';
import { ErrorState, EmptyState, Loading } from '../components/states';
import { formatInt, formatRelative, formatTime, formatUsd } from '../lib/format';
import { formatDuration } from '../lib/timeline';

export function UsersPage() {
  const [params, setParams] = useSearchParams();
  const cursor = params.get('cursor') ?? undefined;
  const users = useQuery({ queryKey: ['users', cursor], queryFn: () => listUsers(cursor) });
  const next = users.data?.meta.pagination?.nextCursor;
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Users</h1>
          <p className="muted">The end users of your app, by traces and cost.</p>
        </div>
      </header>
      {users.isPending ? (
        <Loading />
      ) : users.isError ? (
        <ErrorState error={users.error} retry={() => users.refetch()} />
      ) : users.data.data.length === 0 ? (
        <EmptyState title="No users yet">
          <p>
            Send traces with a <code>userId</code> to see who uses your app.
          </p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Users">
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col" className="num">
                  Traces
                </th>
                <th scope="col" className="num">
                  Sessions
                </th>
                <th scope="col" className="num">
                  Tokens
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col" className="num">
                  Failed traces
                </th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {users.data.data.map((u) => (
                <tr key={u.userId} data-user-id={u.userId}>
                  <td>
                    <Link to={`/users/${encodeURIComponent(u.userId)}`}>{u.userId}</Link>
                  </td>
                  <td className="num">{formatInt(u.traceCount)}</td>
                  <td className="num">{formatInt(u.sessionCount)}</td>
                  <td className="num">{formatInt(u.totalTokens)}</td>
                  <td className="num">{formatUsd(u.costUsd)}</td>
                  <td className="num">{formatInt(u.traceErrorCount)}</td>
                  <td className="muted">{formatRelative(u.lastSeen)}</td>
                </tr>
              ))}
            </tbody>
          </table>
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

export function UserPage() {
  const { userId = '' } = useParams();
  const user = useQuery({ queryKey: ['user', userId], queryFn: () => getUser(userId) });
  const sessions = useQuery({ queryKey: ['sessions', 'user', userId], queryFn: () => listUserSessions(userId) });
  if (user.isPending) return <Loading />;
  if (user.isError) return <ErrorState error={user.error} retry={() => user.refetch()} />;
  const u = user.data.data;
  return (
    <div className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/users">Users</Link> <span aria-hidden="true">/</span> <span>{u.userId}</span>
      </nav>
      <header className="page-head">
        <div>
          <h1>{u.userId}</h1>
          <p className="muted">
            First seen {formatTime(u.firstSeen)} · last seen {formatTime(u.lastSeen)}
          </p>
        </div>
        <Link className="button" to={`/traces?userId=${encodeURIComponent(u.userId)}`}>
          Traces of this user
        </Link>
      </header>
      <dl className="kpis kpis-compact">
        <div>
          <dt>Traces</dt>
          <dd>{formatInt(u.traceCount)}</dd>
        </div>
        <div>
          <dt>Sessions</dt>
          <dd>{formatInt(u.sessionCount)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{formatInt(u.totalTokens)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{formatUsd(u.costUsd)}</dd>
        </div>
        <div>
          <dt>Failed traces</dt>
          <dd>{formatInt(u.traceErrorCount)}</dd>
        </div>
      </dl>
      <section className="card" aria-label="Sessions of this user">
        <h2>Recent sessions</h2>
        {sessions.isError ? (
          <ErrorState error={sessions.error} />
        ) : !sessions.data ? (
          <Loading />
        ) : sessions.data.data.length === 0 ? (
          <p className="muted">No session in this window.</p>
        ) : (
          <table className="table compact" aria-label="Sessions">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col" className="num">
                  Traces
                </th>
                <th scope="col" className="num">
                  Duration
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col">Last activity</th>
              </tr>
            </thead>
            <tbody>
              {sessions.data.data.map((s) => (
                <tr key={s.sessionId}>
                  <td>
                    <Link to={`/sessions/${encodeURIComponent(s.sessionId)}`}>{s.sessionId}</Link>
                  </td>
                  <td className="num">{formatInt(s.traceCount)}</td>
                  <td className="num">{formatDuration(s.durationMs)}</td>
                  <td className="num">{formatUsd(s.costUsd)}</td>
                  <td className="muted">{formatRelative(s.lastEndTime ?? s.firstStartTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
