import type { Sql } from '../../stores/postgres.js';
import { takeConnectionCall } from '../tables/connection-calls-table.js';

/**
 * Calls per minute per model connection, counted in PostgreSQL so every service instance (and
 * every lane of its worker, and the preview) takes from one budget: a token bucket of the
 * connection's `requestsPerMinute` (postgres/0018, decision 114). A job whose connection has no
 * call left is put back until one is, without counting an attempt. A connection with no limit
 * costs no statement.
 */
export interface ConnectionRateLimiter {
  /** Takes a call of the connection's budget: 0 when taken, else the milliseconds until one is free. */
  take(connectionId: string, perMinute: number | null): Promise<number>;
}

export function createConnectionRateLimiter(sql: Sql, now: () => number = Date.now): ConnectionRateLimiter {
  return {
    take: async (connectionId, perMinute) => (perMinute === null ? 0 : takeConnectionCall(sql, connectionId, perMinute, now())),
  };
}
