import { z } from 'zod';
import { scoreAveragesSchema } from '../../../contract/trace-scores.js';
import { listTracesQuery, pageCursorSchema, sessionIdSchema, traceListItemSchema, userIdSchema } from '../schemas.js';

/**
 * Wire shapes of GET /api/sessions, /api/sessions/:sessionId, /api/users and
 * /api/users/:userId. Figures come from the trace summaries that start in the window: the
 * traces' usage by the trace rule (README, Traces), `errorCount` the spans with status error,
 * `traceErrorCount` the traces with status error.
 */

const isoTime = listTracesQuery.shape.startAfter;
const limit = z.coerce.number().int().min(1).max(100).default(20);
const window = { startAfter: isoTime, startBefore: isoTime };

export const sessionsQuery = z.object({ ...window, userId: userIdSchema.optional(), limit, cursor: pageCursorSchema.optional() }).strict();
export type SessionsQuery = z.infer<typeof sessionsQuery>;

export const sessionQuery = z.object({ ...window, limit, cursor: pageCursorSchema.optional() }).strict();
export type SessionQuery = z.infer<typeof sessionQuery>;
export const sessionParams = z.object({ sessionId: sessionIdSchema });
/** The id in the query: the form for ids a URL path cannot carry ("." and ".." are resolved away by URL parsers). */
export const sessionByIdQuery = sessionQuery.extend({ sessionId: sessionIdSchema }).strict();

export const usersQuery = z.object({ ...window, limit, cursor: pageCursorSchema.optional() }).strict();
export type UsersQuery = z.infer<typeof usersQuery>;
export const userQuery = z.object(window).strict();
export type UserQuery = z.infer<typeof userQuery>;
export const userParams = z.object({ userId: userIdSchema });
export const userByIdQuery = userQuery.extend({ userId: userIdSchema }).strict();

const usage = {
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  costUsd: z.number(),
  /** Spans with status error. */
  errorCount: z.number().int(),
  /** Traces with status error. */
  traceErrorCount: z.number().int(),
};

export const sessionSummarySchema = z.object({
  sessionId: z.string(),
  traceCount: z.number().int(),
  firstStartTime: z.string(),
  /** The latest end of its finished traces; null while none has finished. */
  lastEndTime: z.string().nullable(),
  /** From firstStartTime to lastEndTime; null with lastEndTime. */
  durationMs: z.number().nullable(),
  /** Up to 5 of the session's users, in text order. */
  userIds: z.array(z.string()),
  ...usage,
  /** Per score name, the averages of the scores on the session and on its traces (absent without scores). */
  scores: scoreAveragesSchema.optional(),
});
export type SessionSummary = z.infer<typeof sessionSummarySchema>;

export const sessionDetailSchema = sessionSummarySchema.extend({
  /** The session's traces in start order, one page (meta.pagination). */
  traces: z.array(traceListItemSchema),
});

export const userSummarySchema = z.object({
  userId: z.string(),
  traceCount: z.number().int(),
  /** Distinct sessions of the user's traces. */
  sessionCount: z.number().int(),
  ...usage,
  /** The start of the user's first trace. */
  firstSeen: z.string(),
  /** The latest start or end of the user's traces. */
  lastSeen: z.string(),
  /** Per score name, the averages of the scores on the user's traces (absent without scores). */
  scores: scoreAveragesSchema.optional(),
});
export type UserSummary = z.infer<typeof userSummarySchema>;

/** Pages of groups carry no total: counting the groups would cost a second pass. */
export const cursorPageMeta = {
  pagination: z.object({ limit: z.number().int(), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
};
