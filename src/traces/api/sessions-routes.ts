import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { envelope, sendData } from '../../http/wire/envelope.js';
import type { ScoreAverages, TraceScores } from '../../contract/trace-scores.js';
import { averaged } from './scored-reads.js';
import { queryLimitsOf } from '../model/query-limits.js';
import { clientErrors, clientErrorsOrNotFound, queryTooExpensiveSchema } from './route-errors.js';
import { getSession, getUser, listSessions, listUsers } from '../query/sessions.js';
import {
  cursorPageMeta,
  sessionDetailSchema,
  sessionByIdQuery,
  sessionParams,
  sessionQuery,
  sessionSummarySchema,
  sessionsQuery,
  userByIdQuery,
  userParams,
  userQuery,
  userSummarySchema,
  usersQuery,
} from '../model/wire/sessions-schemas.js';

const errors = { ...clientErrors, 422: queryTooExpensiveSchema };
const notFound = { 404: clientErrorsOrNotFound[404] };

/** GET /api/sessions…; every read is confined to `request.auth.workspaceId`. */
/** Options of the session and user routes; `scores` gives their score averages (absent: none). */
type GroupRouteOptions = { clickhouse: ClickHouseClient; config: Config; scores?: TraceScores };
const none = async () => new Map<string, ScoreAverages>();

export const sessionRoutes: FastifyPluginAsyncZod<GroupRouteOptions> = async (app, { clickhouse, config, scores }) => {
  const averagesOf = scores?.averagesOfSessions ?? none;
  const limits = queryLimitsOf(config);
  const tags = ['sessions'];

  app.get('/', {
    config: { readBarrier: 'workspace' },
    schema: {
      summary: 'Sessions of the window (default the last 30 days), most recent activity first; cursor pages',
      querystring: sessionsQuery,
      response: { 200: envelope(z.array(sessionSummarySchema), cursorPageMeta), ...errors },
      tags,
    },
    handler: async (request, reply) => {
      const { workspaceId } = request.auth;
      const { items, pagination } = await listSessions(clickhouse, workspaceId, request.query, limits);
      const scored = await averaged(
        items,
        (item) => item.sessionId,
        (ids) => averagesOf(workspaceId, ids),
      );
      return sendData(request, reply, scored, { meta: { pagination } });
    },
  });

  app.get('/:sessionId', {
    config: { readBarrier: 'workspace' },
    schema: {
      summary: "A session's figures and one page of its traces in start order",
      params: sessionParams,
      querystring: sessionQuery,
      response: { 200: envelope(sessionDetailSchema, cursorPageMeta), ...errors, ...notFound },
      tags,
    },
    handler: async (request, reply) => {
      const { workspaceId } = request.auth;
      const { session, pagination } = await getSession(clickhouse, workspaceId, request.params.sessionId, request.query, limits);
      const [scored] = await averaged(
        [session],
        (item) => item.sessionId,
        (ids) => averagesOf(workspaceId, ids),
      );
      return sendData(request, reply, scored, { meta: { pagination } });
    },
  });
};

/** GET /api/users…; every read is confined to `request.auth.workspaceId`. */
export const userRoutes: FastifyPluginAsyncZod<GroupRouteOptions> = async (app, { clickhouse, config, scores }) => {
  const averagesOf = scores?.averagesOfUsers ?? none;
  const limits = queryLimitsOf(config);
  const tags = ['users'];

  app.get('/', {
    config: { readBarrier: 'workspace' },
    schema: {
      summary: 'Users of the window (default the last 30 days), most recent activity first; cursor pages',
      querystring: usersQuery,
      response: { 200: envelope(z.array(userSummarySchema), cursorPageMeta), ...errors },
      tags,
    },
    handler: async (request, reply) => {
      const { workspaceId } = request.auth;
      const { items, pagination } = await listUsers(clickhouse, workspaceId, request.query, limits);
      const scored = await averaged(
        items,
        (item) => item.userId,
        (ids) => averagesOf(workspaceId, ids),
      );
      return sendData(request, reply, scored, { meta: { pagination } });
    },
  });

  app.get('/:userId', {
    config: { readBarrier: 'workspace' },
    schema: {
      summary: "A user's traces, sessions, tokens, cost, errors, first and last seen in the window",
      params: userParams,
      querystring: userQuery,
      response: { 200: envelope(userSummarySchema), ...errors, ...notFound },
      tags,
    },
    handler: async (request, reply) => {
      const { workspaceId } = request.auth;
      const user = await getUser(clickhouse, workspaceId, request.params.userId, request.query, limits);
      const [scored] = await averaged(
        [user],
        (item) => item.userId,
        (ids) => averagesOf(workspaceId, ids),
      );
      return sendData(request, reply, scored);
    },
  });
};

/**
 * GET /api/session?sessionId= and GET /api/user?userId=: one session or user as the path forms
 * answer it, with the id in the query. A URL path cannot carry the ids "." and ".." (every URL
 * parser resolves them away: /api/sessions/.. is /api/), so clients reach those here.
 */
export const itemByQueryRoutes: FastifyPluginAsyncZod<GroupRouteOptions> = async (app, { clickhouse, config, scores }) => {
  const limits = queryLimitsOf(config);
  const sessionAverages = scores?.averagesOfSessions ?? none;
  const userAverages = scores?.averagesOfUsers ?? none;

  app.get('/session', {
    schema: {
      summary: 'One session, as GET /api/sessions/:sessionId, the id in the query (for ids a path cannot carry: ".", "..")',
      querystring: sessionByIdQuery,
      response: { 200: envelope(sessionDetailSchema, cursorPageMeta), ...errors, ...notFound },
      tags: ['sessions'],
    },
    handler: async (request, reply) => {
      const { sessionId, ...query } = request.query;
      const { workspaceId } = request.auth;
      const { session, pagination } = await getSession(clickhouse, workspaceId, sessionId, query, limits);
      const [scored] = await averaged(
        [session],
        (item) => item.sessionId,
        (ids) => sessionAverages(workspaceId, ids),
      );
      return sendData(request, reply, scored, { meta: { pagination } });
    },
  });

  app.get('/user', {
    schema: {
      summary: 'One user, as GET /api/users/:userId, the id in the query (for ids a path cannot carry: ".", "..")',
      querystring: userByIdQuery,
      response: { 200: envelope(userSummarySchema), ...errors, ...notFound },
      tags: ['users'],
    },
    handler: async (request, reply) => {
      const { userId, ...query } = request.query;
      const { workspaceId } = request.auth;
      const user = await getUser(clickhouse, workspaceId, userId, query, limits);
      const [scored] = await averaged(
        [user],
        (item) => item.userId,
        (ids) => userAverages(workspaceId, ids),
      );
      return sendData(request, reply, scored);
    },
  });
};
