/**
 * Calls per minute per model connection, counted in this process (every lane of its worker
 * takes from one limiter): a sliding window of the last minute's call times. A job whose
 * connection has no call left is put back until the oldest call leaves the window, without
 * counting an attempt. Each service instance counts its own calls (docs/decisions/107).
 */
export interface ConnectionRateLimiter {
  /** Takes a call of the connection's budget: 0 when taken, else the milliseconds until one is free. */
  take(connectionId: string, perMinute: number | null): number;
}

const WINDOW_MS = 60_000;

export function createConnectionRateLimiter(now: () => number = Date.now): ConnectionRateLimiter {
  const calls = new Map<string, number[]>();
  return {
    take(connectionId, perMinute) {
      if (perMinute === null) return 0;
      const at = now();
      const recent = (calls.get(connectionId) ?? []).filter((t) => t > at - WINDOW_MS);
      if (recent.length >= perMinute) {
        calls.set(connectionId, recent);
        return Math.max(1, recent[recent.length - perMinute]! + WINDOW_MS - at);
      }
      recent.push(at);
      calls.set(connectionId, recent);
      return 0;
    },
  };
}
