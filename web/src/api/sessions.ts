/** Sessions and users: lists paged by cursor, and one of each with its figures. */
import { api, call } from './client';

export const listSessions = (cursor?: string) =>
  call(api.GET('/api/sessions/', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } }));
// One session or user by the query forms: a path cannot carry the ids "." and "..".
export const getSession = (sessionId: string, cursor?: string) =>
  call(api.GET('/api/session', { params: { query: { sessionId, limit: 100, ...(cursor ? { cursor } : {}) } } }));
export const listUsers = (cursor?: string) =>
  call(api.GET('/api/users/', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } }));
export const getUser = (userId: string) => call(api.GET('/api/user', { params: { query: { userId } } }));
export const listUserSessions = (userId: string) => call(api.GET('/api/sessions/', { params: { query: { userId, limit: 20 } } }));

export type SessionSummary = Awaited<ReturnType<typeof listSessions>>['data'][number];
export type UserSummary = Awaited<ReturnType<typeof listUsers>>['data'][number];
