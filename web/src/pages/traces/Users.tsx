import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { getUser, listUserSessions, listUsers } from '../../api/sessions';
import { CursorListPage, DataTable, Totals } from '../../components/GroupList';
import { ErrorState, Loading } from '../../components/states';
import { formatInt, formatTime, formatUsd } from '../../lib/format';
import { sessionColumns, userColumns } from './group-columns';
import { useItemParam } from '../../lib/item-param';
import { Clamped, Clipped } from '../../components/Clipped';

export function UsersPage() {
  const c = userColumns;
  return (
    <CursorListPage
      title="Users"
      description="The end users of your app, by traces and cost."
      queryKey="users"
      load={listUsers}
      empty={{
        title: 'No users yet',
        hint: (
          <>
            Send traces with a <code>userId</code> to see who uses your app.
          </>
        ),
      }}
      table={{
        columns: [c.user, c.traces, c.sessions, c.tokens, c.cost, c.failedTraces, c.lastSeen],
        rowKey: (u) => u.userId,
        rowData: (u) => ['data-user-id', u.userId],
      }}
    />
  );
}

export function UserPage() {
  const userId = useItemParam('users');
  const user = useQuery({ queryKey: ['user', userId], queryFn: () => getUser(userId) });
  const sessions = useQuery({ queryKey: ['sessions', 'user', userId], queryFn: () => listUserSessions(userId) });
  if (user.isPending) return <Loading />;
  if (user.isError) return <ErrorState error={user.error} retry={() => user.refetch()} />;
  const u = user.data.data;
  const sc = sessionColumns;
  return (
    <div className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/users">Users</Link> <span aria-hidden="true">/</span> <Clipped text={u.userId} />
      </nav>
      <header className="page-head">
        <div>
          <h1>
            <Clamped text={u.userId} />
          </h1>
          <p className="muted">
            First seen {formatTime(u.firstSeen)} · last seen {formatTime(u.lastSeen)}
          </p>
        </div>
        <Link className="button" to={`/traces?userId=${encodeURIComponent(u.userId)}`}>
          Traces of this user
        </Link>
      </header>
      <Totals
        label="User totals"
        items={[
          { label: 'Traces', value: formatInt(u.traceCount), kpi: 'traces' },
          { label: 'Sessions', value: formatInt(u.sessionCount), kpi: 'sessions' },
          { label: 'Tokens', value: formatInt(u.totalTokens), kpi: 'tokens' },
          { label: 'Cost', value: formatUsd(u.costUsd), kpi: 'cost' },
          { label: 'Failed traces', value: formatInt(u.traceErrorCount) },
        ]}
      />
      <section className="card" aria-label="Sessions of this user">
        <h2>Recent sessions</h2>
        {sessions.isError ? (
          <ErrorState error={sessions.error} />
        ) : !sessions.data ? (
          <Loading />
        ) : sessions.data.data.length === 0 ? (
          <p className="muted">No session in this window.</p>
        ) : (
          <DataTable
            label="Sessions"
            compact
            rows={sessions.data.data}
            columns={[sc.session, sc.traces, sc.duration, sc.cost, sc.lastActivity]}
            rowKey={(s) => s.sessionId}
            rowData={(s) => ['data-session-id', s.sessionId]}
          />
        )}
      </section>
    </div>
  );
}
