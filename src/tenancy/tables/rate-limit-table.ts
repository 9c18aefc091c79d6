import type { Sql } from '../../stores/postgres.js';
import { DAY_MS, MINUTE_MS, windowsAt, type Limits, type Windows } from '../model/rate-limit-rules.js';

export interface Reservation {
  granted: number;
  /** The windows' counts right after the grant, every replica's reservations included. */
  minuteCount: number;
  dayCount: number;
}

/** Reserves up to `want` requests in both windows with one statement (see postgres/0003_rate_limits.sql). */
export async function reserveRequests(
  sql: Sql,
  organizationId: string,
  limits: Limits,
  windows: Windows,
  want: number,
): Promise<Reservation> {
  const [row] = await sql<Reservation[]>`
    select granted, minute_count as "minuteCount", day_count as "dayCount"
    from rate_limit_reserve(${organizationId}, ${windows.minuteStart}, ${windows.dayStart},
                            ${limits.perMinute}, ${limits.perDay}, ${want})`;
  return row!;
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
