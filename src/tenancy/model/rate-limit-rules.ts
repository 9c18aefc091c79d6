import type { Plan } from '../../config.js';

/** An organization's own limits as stored; null means "the plan's default". */
export interface CustomLimits {
  perMinute: number | null;
  perDay: number | null;
}

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
export function limitsFor(plan: Plan, custom: CustomLimits): Limits {
  if (plan !== 'enterprise') return planLimits[plan];
  return { perMinute: custom.perMinute ?? planLimits.pro.perMinute, perDay: custom.perDay ?? planLimits.pro.perDay };
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

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
  /** Requests admitted in the current minute, this one included when admitted. */
  minute: number;
  /** Requests admitted today, this one included when admitted. */
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
 * How many requests one replica reserves at a time: 1% of the tighter limit, between 1 and 100.
 * What a replica reserved and did not use counts as used, so an organization loses at most
 * 1% of a window per replica; small plans reserve one at a time and are counted exactly.
 */
export function leaseSize(limits: Limits, max = 100): number {
  return Math.max(1, Math.min(max, Math.floor(limits.perMinute / 100), Math.floor(limits.perDay / 100)));
}
