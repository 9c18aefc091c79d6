import { Link } from 'react-router';
import { ClippedLink } from '../../components/Clipped';
import type { SessionSummary, UserSummary } from '../../api/sessions';
import type { Column } from '../../components/GroupList';
import { formatInt, formatRelative, formatUsd } from '../../lib/format';
import { formatDuration } from '../../lib/timeline';
import { itemPath } from '../../lib/paths';

/** The columns of sessions and users, shared by their lists and the pages that list them. */

const muted = () => 'muted';

export const sessionColumns = {
  session: {
    header: 'Session',
    cell: (s) => <ClippedLink to={itemPath('sessions', s.sessionId)} text={s.sessionId} inCell />,
  },
  lastActivity: { header: 'Last activity', cell: (s) => formatRelative(s.lastEndTime ?? s.firstStartTime), tone: muted },
  traces: { header: 'Traces', numeric: true, cell: (s) => formatInt(s.traceCount) },
  duration: { header: 'Duration', numeric: true, cell: (s) => formatDuration(s.durationMs) },
  tokens: { header: 'Tokens', numeric: true, cell: (s) => formatInt(s.totalTokens) },
  cost: { header: 'Cost', numeric: true, cell: (s) => formatUsd(s.costUsd) },
  errors: {
    header: 'Errors',
    numeric: true,
    cell: (s) => formatInt(s.traceErrorCount),
    tone: (s) => (s.traceErrorCount ? 'text-error' : undefined),
  },
  users: {
    header: 'Users',
    cell: (s) =>
      s.userIds.length ? (
        // Three lines for them all, cut as one name is: the list in its title.
        <span className="clip-cell" title={s.userIds.join(', ')}>
          {s.userIds.map((u, i) => (
            <span key={u}>
              {i > 0 && ', '}
              <Link to={itemPath('users', u)} title={u}>
                {u}
              </Link>
            </span>
          ))}
        </span>
      ) : (
        <span className="muted">—</span>
      ),
  },
} satisfies Record<string, Column<SessionSummary>>;

export const userColumns = {
  user: { header: 'User', cell: (u) => <ClippedLink to={itemPath('users', u.userId)} text={u.userId} inCell /> },
  traces: { header: 'Traces', numeric: true, cell: (u) => formatInt(u.traceCount) },
  sessions: { header: 'Sessions', numeric: true, cell: (u) => formatInt(u.sessionCount) },
  tokens: { header: 'Tokens', numeric: true, cell: (u) => formatInt(u.totalTokens) },
  cost: { header: 'Cost', numeric: true, cell: (u) => formatUsd(u.costUsd) },
  failedTraces: { header: 'Failed traces', numeric: true, cell: (u) => formatInt(u.traceErrorCount) },
  lastSeen: { header: 'Last seen', cell: (u) => formatRelative(u.lastSeen), tone: muted },
} satisfies Record<string, Column<UserSummary>>;
