/**
 * Sessions and users: endpoints of newer services, not yet in the generated types; the shapes
 * are the documented ones. The console probes them and hides these screens on a 404.
 */
import { getUntyped } from './client';
import type { TraceListItem } from './types';

export interface SessionSummary {
  sessionId: string;
  traceCount: number;
  firstStartTime: string;
  lastEndTime: string | null;
  durationMs: number | null;
  userIds: string[];
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
  errorCount: number;
  traceErrorCount: number;
}

export interface SessionDetail extends SessionSummary {
  traces: TraceListItem[];
}

export interface UserSummary {
  userId: string;
  traceCount: number;
  sessionCount: number;
  totalTokens: number;
  costUsd: number;
  errorCount: number;
  firstSeen: string;
  lastSeen: string;
}

interface Page<T> {
  data: T;
  meta: { requestId: string; pagination?: { nextCursor?: string | null; hasMore?: boolean } };
}

export const listSessions = (cursor?: string) => getUntyped<Page<SessionSummary[]>>('/api/sessions', { limit: 50, cursor });
export const getSession = (id: string, cursor?: string) =>
  getUntyped<Page<SessionDetail>>(`/api/sessions/${encodeURIComponent(id)}`, { limit: 100, cursor });
export const listUsers = (cursor?: string) => getUntyped<Page<UserSummary[]>>('/api/users', { limit: 50, cursor });
export const getUser = (id: string) => getUntyped<Page<UserSummary>>(`/api/users/${encodeURIComponent(id)}`);
