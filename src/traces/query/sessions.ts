import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { notFound, validationError } from '../../http/wire/errors.js';
import { decodeCursor, encodeCursor, queryDigest, type CursorState } from '../model/cursor.js';
import { limitSettings, resolveWindow, type QueryLimits, type Window } from '../model/query-limits.js';
import { fromStoredTime, storedTimePattern, toStoredTime } from '../model/stored-time.js';
import { selectSessionPage } from '../tables/session-traces-table.js';
import { selectSessionGroups, selectUserGroups, type SessionRow, type UserRow } from '../tables/traces-table.js';
import { toTraceListItem } from './tree.js';
import type { SessionQuery, SessionSummary, SessionsQuery, UserQuery, UserSummary, UsersQuery } from '../model/wire/sessions-schemas.js';

/**
 * Sessions and users: pages of groups of trace summaries within a window (default the last 30
 * days, at most LOUPE_QUERY_MAX_WINDOW_DAYS), and one session's traces in start order.
 * A cursor keeps the window of its first page, so "now" does not move under a walk.
 */

const usage = (row: SessionRow | UserRow) => ({
  inputTokens: row.inputTokens,
  outputTokens: row.outputTokens,
  totalTokens: row.totalTokens,
  costUsd: row.costUsd,
  errorCount: row.errorCount,
  traceErrorCount: row.traceErrorCount,
});

const toSessionSummary = (row: SessionRow): SessionSummary => ({
  sessionId: row.id,
  traceCount: row.traceCount,
  firstStartTime: fromStoredTime(row.firstStart),
  lastEndTime: row.lastEnd === null ? null : fromStoredTime(row.lastEnd),
  durationMs: row.durationMs,
  userIds: row.userIds,
  ...usage(row),
});

const toUserSummary = (row: UserRow): UserSummary => ({
  userId: row.id,
  traceCount: row.traceCount,
  sessionCount: row.sessionCount,
  ...usage(row),
  firstSeen: fromStoredTime(row.firstStart),
  lastSeen: fromStoredTime(row.activityKey),
});

/** The cursor of a page query, checked against the query's other parameters (`of`: what it pages, for the error). */
function cursorOf(cursor: string | undefined, digest: string, of = 'this list'): CursorState | undefined {
  if (cursor === undefined) return undefined;
  const state = decodeCursor(cursor, digest);
  if (!storedTimePattern.test(state.k) || state.w === undefined) {
    throw validationError('Invalid request: querystring.cursor: is not a cursor this API returned', [
      { path: 'querystring.cursor', message: `is not a cursor of ${of}` },
    ]);
  }
  return state;
}

function windowOf(
  query: { startAfter?: string | undefined; startBefore?: string | undefined },
  state: CursorState | undefined,
  limits: QueryLimits,
): Window {
  return state?.w ? { from: state.w[0], to: state.w[1] } : resolveWindow(query.startAfter, query.startBefore, limits);
}

function pageOf<R extends { activityKey: string; id: string }>(rows: R[], limit: number, digest: string, window: Window) {
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  const last = page.at(-1);
  const nextCursor = more && last ? encodeCursor({ q: digest, k: last.activityKey, id: last.id, w: [window.from, window.to] }) : null;
  return { page, pagination: { limit, hasMore: more, nextCursor } };
}

/**
 * A page of groups (sessions or users): what it asks the table (the window, its cursor's or the
 * query's; one row past the page; where it starts) and the page of the rows found.
 */
function groupPage(query: SessionsQuery | UsersQuery, limits: QueryLimits) {
  const digest = queryDigest(query);
  const state = cursorOf(query.cursor, digest);
  const window = windowOf(query, state, limits);
  return {
    request: {
      filter: { startAfter: window.from, startBefore: window.to },
      fetch: query.limit + 1,
      after: state && { key: state.k, id: state.id },
    },
    pageOf: <R extends { activityKey: string; id: string }>(rows: R[]) => pageOf(rows, query.limit, digest, window),
  };
}

export async function listSessions(clickhouse: ClickHouseClient, workspaceId: string, query: SessionsQuery, limits: QueryLimits) {
  const group = groupPage(query, limits);
  const rows = await selectSessionGroups(clickhouse, { workspaceId, ...group.request, withUser: query.userId }, limitSettings(limits));
  const { page, pagination } = group.pageOf(rows);
  return { items: page.map(toSessionSummary), pagination };
}

/** The session's figures in the window and one page of its traces in start order. */
export async function getSession(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  sessionId: string,
  query: SessionQuery,
  limits: QueryLimits,
) {
  const digest = queryDigest({ ...query, sessionId });
  const state = cursorOf(query.cursor, digest, 'this session');
  const window = windowOf(query, state, limits);
  const startAfter = toStoredTime(window.from);
  const [found] = await selectSessionPage(
    clickhouse,
    // The first page starts at the window (every trace of it starts after it).
    {
      workspaceId,
      sessionId,
      startAfter,
      startBefore: toStoredTime(window.to),
      afterKey: state?.k ?? startAfter,
      afterId: state?.id ?? '',
      fetch: query.limit + 1,
    },
    limitSettings(limits),
  );
  if (!found || found.traceCount === 0) throw notFound('Session', { sessionId });
  const { page, ...figures } = found;
  const summary: SessionRow = { ...figures, id: sessionId };
  const rows = page.slice(0, query.limit);
  const more = page.length > query.limit;
  const last = rows.at(-1);
  const nextCursor = more && last ? encodeCursor({ q: digest, k: last.k, id: last.trace_id, w: [window.from, window.to] }) : null;
  return {
    session: { ...toSessionSummary(summary), traces: rows.map((row) => toTraceListItem(row.item)) },
    pagination: { limit: query.limit, hasMore: more, nextCursor },
  };
}

export async function listUsers(clickhouse: ClickHouseClient, workspaceId: string, query: UsersQuery, limits: QueryLimits) {
  const group = groupPage(query, limits);
  const rows = await selectUserGroups(clickhouse, { workspaceId, ...group.request }, limitSettings(limits));
  const { page, pagination } = group.pageOf(rows);
  return { items: page.map(toUserSummary), pagination };
}

export async function getUser(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  userId: string,
  query: UserQuery,
  limits: QueryLimits,
): Promise<UserSummary> {
  const window = resolveWindow(query.startAfter, query.startBefore, limits);
  const [row] = await selectUserGroups(
    clickhouse,
    { workspaceId, filter: { startAfter: window.from, startBefore: window.to, userId }, fetch: 1 },
    limitSettings(limits),
  );
  if (!row) throw notFound('User', { userId });
  return toUserSummary(row);
}
