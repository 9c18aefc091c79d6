import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Plan } from '../config.js';
import type { Sql } from '../stores/postgres.js';
import type { AuthContext } from './auth.js';
import { AppError } from './errors.js';

export interface Limits {
  perMinute: number;
  perDay: number;
}

/** The published plans; enterprise organizations carry their own numbers. */
export const planLimits: Record<Exclude<Plan, 'enterprise'>, Limits> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
};

/** An enterprise organization missing a number (only possible by editing the table) falls back to pro's. */
export function limitsFor(plan: Plan, custom: AuthContext['customLimits']): Limits {
  if (plan !== 'enterprise') return planLimits[plan];
  return { perMinute: custom.perMinute ?? planLimits.pro.perMinute, perDay: custom.perDay ?? planLimits.pro.perDay };
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export interface Windows {
  minuteStart: Date;
  dayStart: Date;
}

/** Fixed windows in UTC: the minute and the calendar day that contain `nowMs`. */
export function windowsAt(nowMs: number): Windows {
  return {
    minuteStart: new Date(Math.floor(nowMs / MINUTE_MS) * MINUTE_MS),
    dayStart: new Date(Math.floor(nowMs / DAY_MS) * DAY_MS),
  };
}

export interface Counts {
  /** Requests counted in the current minute, this one included. */
  minute: number;
  /** Requests admitted today, this one included when it was admitted. */
  day: number;
  admitted: boolean;
}

export interface Decision {
  allowed: boolean;
  window: 'minute' | 'day';
  limit: number;
  remaining: number;
  /** Whole seconds until the reported window starts over (at least 1). */
  resetSeconds: number;
}

/**
 * Reports the tighter window: when the request is refused, the exhausted window that frees up
 * last (so Retry-After is honest); otherwise the one with fewer requests left.
 */
export function decide(counts: Counts, limits: Limits, windows: Windows, nowMs: number): Decision {
  const resetIn = (start: Date, length: number) => Math.max(1, Math.ceil((start.getTime() + length - nowMs) / 1000));
  const minute = {
    window: 'minute' as const,
    limit: limits.perMinute,
    remaining: Math.max(0, limits.perMinute - counts.minute),
    resetSeconds: resetIn(windows.minuteStart, MINUTE_MS),
  };
  const day = {
    window: 'day' as const,
    limit: limits.perDay,
    remaining: Math.max(0, limits.perDay - counts.day),
    resetSeconds: resetIn(windows.dayStart, DAY_MS),
  };
  if (!counts.admitted) {
    const dayExhausted = counts.day >= limits.perDay;
    return { allowed: false, ...(dayExhausted ? day : minute), remaining: 0 };
  }
  return { allowed: true, ...(day.remaining < minute.remaining ? day : minute) };
}

/**
 * Counts one request of an organization in both windows with one statement. The minute window
 * counts every attempt; the day window only admitted requests, so a client retrying too fast
 * does not burn its day. The final select reads the day row as it was before the statement,
 * which is the day's count when this request did not touch it.
 */
export async function countRequest(sql: Sql, organizationId: string, limits: Limits, windows: Windows): Promise<Counts> {
  const [row] = await sql<{ minute: number; dayAdmitted: number | null; dayBefore: number | null }[]>`
    with minute as (
      insert into rate_limit_windows as w (organization_id, kind, window_start, count)
      values (${organizationId}, 'minute', ${windows.minuteStart}, 1)
      on conflict (organization_id, kind, window_start) do update set count = w.count + 1
      returning w.count
    ), day as (
      insert into rate_limit_windows as w (organization_id, kind, window_start, count)
      select ${organizationId}, 'day', ${windows.dayStart}, 1 from minute where minute.count <= ${limits.perMinute}
      on conflict (organization_id, kind, window_start) do update set count = w.count + 1
        where w.count < ${limits.perDay}
      returning w.count
    )
    select (select count from minute) as minute,
           (select count from day) as "dayAdmitted",
           (select count from rate_limit_windows
             where organization_id = ${organizationId} and kind = 'day' and window_start = ${windows.dayStart}) as "dayBefore"`;
  const admitted = row!.dayAdmitted !== null;
  return { minute: row!.minute, day: row!.dayAdmitted ?? row!.dayBefore ?? 0, admitted };
}

/** Deletes windows that can no longer count: minutes before the previous one, days before yesterday. */
export async function pruneWindows(sql: Sql, nowMs: number): Promise<number> {
  const { minuteStart, dayStart } = windowsAt(nowMs);
  const result = await sql`
    delete from rate_limit_windows
    where (kind = 'minute' and window_start < ${new Date(minuteStart.getTime() - MINUTE_MS)})
       or (kind = 'day' and window_start < ${new Date(dayStart.getTime() - DAY_MS)})`;
  return result.count;
}

export interface RateLimiterOptions {
  /** The clock; tests move it to cross minute and day boundaries. */
  now?: () => number;
  /** How often (by that clock) one instance prunes old windows. */
  pruneEveryMs?: number;
}

export interface RateLimiter {
  admit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  prune(): Promise<number>;
}

/** Per-organization limits counted in PostgreSQL, so every replica draws on one budget. */
export function createRateLimiter(sql: Sql, options: RateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const pruneEveryMs = options.pruneEveryMs ?? 5 * MINUTE_MS;
  let lastPrune = Number.NEGATIVE_INFINITY;
  const prune = () => pruneWindows(sql, now());

  return {
    prune,
    async admit(request, reply) {
      const nowMs = now();
      if (nowMs - lastPrune >= pruneEveryMs) {
        lastPrune = nowMs;
        prune().catch((error: unknown) => request.log.warn({ err: error }, 'could not prune rate-limit windows'));
      }
      const { organizationId, plan, customLimits } = request.auth;
      const limits = limitsFor(plan, customLimits);
      const windows = windowsAt(nowMs);
      const decision = decide(await countRequest(sql, organizationId, limits, windows), limits, windows, nowMs);
      const headers = {
        'ratelimit-limit': String(decision.limit),
        'ratelimit-remaining': String(decision.remaining),
        'ratelimit-reset': String(decision.resetSeconds),
      };
      reply.headers(headers);
      if (!decision.allowed) {
        throw new AppError(
          'RATE_LIMITED',
          `The organization's ${decision.window} limit of ${decision.limit} requests is used up; retry in ${decision.resetSeconds} s`,
          { window: decision.window, limit: decision.limit, retryAfterSeconds: decision.resetSeconds },
          { ...headers, 'retry-after': String(decision.resetSeconds) },
        );
      }
    },
  };
}
