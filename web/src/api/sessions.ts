/** Sessions and users: lists paged by cursor, and one of each with its figures. */
import { api, call } from './client';

export const listSessions = (cursor?: string) =>
  call(api.GET('/api/sessions/', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } }));
export const getSession = (sessionId: string, cursor?: string) =>
  call(api.GET('/api/sessions/{sessionId}', { params: { path: { sessionId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }));
export const listUsers = (cursor?: string) =>
  call(api.GET('/api/users/', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } }));
export const getUser = (userId: string) => call(api.GET('/api/users/{userId}', { params: { path: { userId } } }));
export const listUserSessions = (userId: string) => call(api.GET('/api/sessions/', { params: { query: { userId, limit: 20 } } }));

export type SessionSummary = Awaited<ReturnType<typeof listSessions>>['data'][number];
export type UserSummary = Awaited<ReturnType<typeof listUsers>>['data'][number];
