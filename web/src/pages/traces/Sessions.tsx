import { useMemo } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { getSession, listSessions } from '../../api/sessions';
import { CursorListPage, Totals } from '../../components/GroupList';
import { ErrorState, Loading } from '../../components/states';
import { StatusBadge } from '../../components/Kind';
import { barGeometry, formatDuration, traceBounds } from '../../lib/timeline';
import { formatInt, formatTime, formatUsd } from '../../lib/format';
import { sessionColumns } from './group-columns';
import { useItemParam } from '../../lib/item-param';
import { itemPath } from '../../lib/paths';
import { Clamped, Clipped, ClippedLink } from '../../components/Clipped';

export function SessionsPage() {
  const c = sessionColumns;
  return (
    <CursorListPage
      title="Sessions"
      description="Conversations and agent runs that span many traces, most recent activity first."
      queryKey="sessions"
      load={listSessions}
      empty={{
        title: 'No sessions yet',
        hint: (
          <>
            Send traces with a <code>sessionId</code> to group them here.
          </>
        ),
      }}
      table={{
        columns: [c.session, c.lastActivity, c.traces, c.duration, c.tokens, c.cost, c.errors, c.users],
        rowKey: (s) => s.sessionId,
        rowData: (s) => ['data-session-id', s.sessionId],
      }}
    />
  );
}

/** A session: its totals and its traces on one timeline, a page at a time (a session may hold 20,000). */
export function SessionPage() {
  const sessionId = useItemParam('sessions');
  const session = useInfiniteQuery({
    queryKey: ['session', sessionId],
    queryFn: ({ pageParam }) => getSession(sessionId, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.meta.pagination.nextCursor ?? undefined,
  });
  const traces = useMemo(() => (session.data?.pages ?? []).flatMap((p) => p.data.traces), [session.data]);
  const bounds = useMemo(
    () => traceBounds(traces.map((t) => ({ startTime: t.startTime, endTime: t.endTime ?? t.startTime, durationMs: t.durationMs ?? 0 }))),
    [traces],
  );
  if (session.isPending) return <Loading />;
  if (session.isError) return <ErrorState error={session.error} retry={() => session.refetch()} />;
  const s = session.data.pages[0]!.data;
  return (
    <div className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/sessions">Sessions</Link> <span aria-hidden="true">/</span> <Clipped text={s.sessionId} />
      </nav>
      <header className="page-head">
        <div>
          <h1>
            <Clamped text={s.sessionId} />
          </h1>
          <p className="muted">
            {formatTime(s.firstStartTime)} → {formatTime(s.lastEndTime)}
            {s.userIds.map((u) => (
              <span key={u}>
                {' · user '}
                <ClippedLink to={itemPath('users', u)} text={u} />
              </span>
            ))}
          </p>
        </div>
        <Link className="button" to={`/traces?sessionId=${encodeURIComponent(s.sessionId)}`}>
          Open in trace list
        </Link>
      </header>
      <Totals
        label="Session totals"
        items={[
          { label: 'Traces', value: formatInt(s.traceCount), kpi: 'traces' },
          { label: 'Duration', value: formatDuration(s.durationMs) },
          { label: 'Tokens', value: formatInt(s.totalTokens), kpi: 'tokens' },
          { label: 'Cost', value: formatUsd(s.costUsd), kpi: 'cost' },
          { label: 'Failed traces', value: formatInt(s.traceErrorCount), error: s.traceErrorCount > 0 },
          { label: 'Failed spans', value: formatInt(s.errorCount) },
        ]}
      />
      <section className="card" aria-label="Session timeline">
        <h2>Timeline</h2>
        <ol className="session-timeline">
          {traces.map((t) => {
            // Traces of seconds in a session of hours: a visible minimum width.
            const bar = barGeometry(
              { startTime: t.startTime, endTime: t.endTime ?? t.startTime, durationMs: t.durationMs ?? 0 },
              bounds,
              0.006,
            );
            return (
              <li key={t.traceId} className="span-row static" data-trace-id={t.traceId}>
                <div className="col-tree">
                  <StatusBadge status={t.status} />
                  <Link className="span-name" to={itemPath('traces', t.traceId)} title={t.name || t.traceId}>
                    {t.name || t.traceId}
                  </Link>
                  <span className="span-dur">
                    {formatDuration(t.durationMs)} · {formatUsd(t.costUsd)}
                  </span>
                </div>
                <div className="col-bar">
                  <span
                    className={`bar bar-agent bar-status-${t.status === 'error' ? 'error' : 'ok'}`}
                    style={{ left: `${bar.left * 100}%`, width: `${bar.width * 100}%` }}
                  />
                </div>
              </li>
            );
          })}
        </ol>
        {session.hasNextPage && (
          <button className="button" onClick={() => void session.fetchNextPage()} disabled={session.isFetchingNextPage}>
            {session.isFetchingNextPage ? 'Loading…' : `Load more (${formatInt(traces.length)} of ${formatInt(s.traceCount)})`}
          </button>
        )}
      </section>
    </div>
  );
}
