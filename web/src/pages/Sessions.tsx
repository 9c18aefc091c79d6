import { useMemo } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearchParams } from 'react-router';
import { getSession, listSessions } from '../api/sessions';
import { ErrorState, EmptyState, Loading } from '../components/states';
import { StatusBadge } from '../components/Kind';
import { barGeometry, formatDuration, traceBounds } from '../lib/timeline';
import { formatInt, formatRelative, formatTime, formatUsd } from '../lib/format';

export function SessionsPage() {
  const [params, setParams] = useSearchParams();
  const cursor = params.get('cursor') ?? undefined;
  const sessions = useQuery({ queryKey: ['sessions', cursor], queryFn: () => listSessions(cursor) });
  const next = sessions.data?.meta.pagination?.nextCursor;
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Sessions</h1>
          <p className="muted">Conversations and agent runs that span many traces, most recent activity first.</p>
        </div>
      </header>
      {sessions.isPending ? (
        <Loading />
      ) : sessions.isError ? (
        <ErrorState error={sessions.error} retry={() => sessions.refetch()} />
      ) : sessions.data.data.length === 0 ? (
        <EmptyState title="No sessions yet">
          <p>
            Send traces with a <code>sessionId</code> to group them here.
          </p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Sessions">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Last activity</th>
                <th scope="col" className="num">
                  Traces
                </th>
                <th scope="col" className="num">
                  Duration
                </th>
                <th scope="col" className="num">
                  Tokens
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col" className="num">
                  Errors
                </th>
                <th scope="col">Users</th>
              </tr>
            </thead>
            <tbody>
              {sessions.data.data.map((s) => (
                <tr key={s.sessionId} data-session-id={s.sessionId}>
                  <td>
                    <Link to={`/sessions/${encodeURIComponent(s.sessionId)}`}>{s.sessionId}</Link>
                  </td>
                  <td className="muted">{formatRelative(s.lastEndTime ?? s.firstStartTime)}</td>
                  <td className="num">{formatInt(s.traceCount)}</td>
                  <td className="num">{formatDuration(s.durationMs)}</td>
                  <td className="num">{formatInt(s.totalTokens)}</td>
                  <td className="num">{formatUsd(s.costUsd)}</td>
                  <td className={`num${s.traceErrorCount ? ' text-error' : ''}`}>{formatInt(s.traceErrorCount)}</td>
                  <td className="truncate">
                    {s.userIds.length ? (
                      s.userIds.map((u, i) => (
                        <span key={u}>
                          {i > 0 && ', '}
                          <Link to={`/users/${encodeURIComponent(u)}`}>{u}</Link>
                        </span>
                      ))
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
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

/** A session: its totals and its traces on one timeline, a page at a time (a session may hold 20,000). */
export function SessionPage() {
  const { sessionId = '' } = useParams();
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
        <Link to="/sessions">Sessions</Link> <span aria-hidden="true">/</span> <span>{s.sessionId}</span>
      </nav>
      <header className="page-head">
        <div>
          <h1>{s.sessionId}</h1>
          <p className="muted">
            {formatTime(s.firstStartTime)} → {formatTime(s.lastEndTime)}
            {s.userIds.map((u) => (
              <span key={u}>
                {' · user '}
                <Link to={`/users/${encodeURIComponent(u)}`}>{u}</Link>
              </span>
            ))}
          </p>
        </div>
        <Link className="button" to={`/traces?sessionId=${encodeURIComponent(s.sessionId)}`}>
          Open in trace list
        </Link>
      </header>
      <dl className="kpis kpis-compact" aria-label="Session totals">
        <div>
          <dt>Traces</dt>
          <dd data-kpi="traces">{formatInt(s.traceCount)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatDuration(s.durationMs)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd data-kpi="tokens">{formatInt(s.totalTokens)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd data-kpi="cost">{formatUsd(s.costUsd)}</dd>
        </div>
        <div>
          <dt>Failed traces</dt>
          <dd className={s.traceErrorCount ? 'text-error' : undefined}>{formatInt(s.traceErrorCount)}</dd>
        </div>
        <div>
          <dt>Failed spans</dt>
          <dd>{formatInt(s.errorCount)}</dd>
        </div>
      </dl>
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
                  <Link className="span-name" to={`/traces/${encodeURIComponent(t.traceId)}`}>
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
          <button className="button" onClick={() => session.fetchNextPage()} disabled={session.isFetchingNextPage}>
            {session.isFetchingNextPage ? 'Loading…' : `Load more (${formatInt(traces.length)} of ${formatInt(s.traceCount)})`}
          </button>
        )}
      </section>
    </div>
  );
}
