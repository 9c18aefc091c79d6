import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from './auth.js';
import type { Sql } from '../../stores/postgres.js';
import { AppError } from '../../http/wire/errors.js';
import { MINUTE_MS, decide, leaseSize, limitsFor, windowsAt, type Counts, type Limits, type Windows } from '../model/rate-limit-rules.js';
import { pruneWindows, reserveRequests } from '../tables/rate-limit-table.js';

/** One organization's state in this process, for the current pair of windows and limits. */
interface Lease {
  key: string;
  /** Reserved in PostgreSQL, not used yet. */
  tokens: number;
  minuteCount: number;
  dayCount: number;
  /** The database granted nothing (a window is used up): refuse locally until the windows change. */
  exhausted: boolean;
  /** Requests of this organization waiting for a token. */
  demand: number;
  pending: Promise<void> | undefined;
}

export interface RateLimiterOptions {
  /** The clock; tests move it to cross minute and day boundaries. */
  now?: () => number;
  /** How often (by that clock) one instance prunes old windows. */
  pruneEveryMs?: number;
  /** Most requests reserved at once beyond those waiting (1: reserve only for waiting requests). */
  maxLease?: number;
}

export interface RateLimiter {
  // this: void: these are handed around alone (`admit: limiter.admit`) and use no `this`.
  admit(this: void, request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /**
   * Counts one request of the caller's organization, whatever the protocol: answers the
   * RateLimit-* headers to send, or throws the 429 (RATE_LIMITED) that carries them.
   */
  count(this: void, auth: AuthContext, log: FastifyBaseLogger): Promise<Record<string, string>>;
  prune(this: void): Promise<number>;
}

/**
 * Per-organization limits counted in PostgreSQL, so every replica draws on one budget. A
 * replica reserves requests in small batches (one reservation at a time per organization,
 * sized to the requests waiting) and admits from them without a round trip; once the
 * database grants nothing, the organization is refused locally until the window turns.
 */
export function createRateLimiter(sql: Sql, options: RateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const pruneEveryMs = options.pruneEveryMs ?? 5 * MINUTE_MS;
  const leases = new Map<string, Lease>();
  let lastPrune = Number.NEGATIVE_INFINITY;

  const prune = async () => {
    const nowMs = now();
    const { minuteStart } = windowsAt(nowMs);
    for (const [organizationId, lease] of leases) {
      if (!lease.pending && !lease.key.startsWith(`${minuteStart.getTime()}/`)) leases.delete(organizationId);
    }
    return await pruneWindows(sql, nowMs);
  };

  async function take(organizationId: string, limits: Limits, windows: Windows): Promise<Counts> {
    const key = `${windows.minuteStart.getTime()}/${windows.dayStart.getTime()}/${limits.perMinute}/${limits.perDay}`;
    let lease = leases.get(organizationId);
    if (!lease || lease.key !== key) {
      lease = { key, tokens: 0, minuteCount: 0, dayCount: 0, exhausted: false, demand: 0, pending: undefined };
      leases.set(organizationId, lease);
    }
    const current = lease;
    current.demand += 1;
    try {
      for (;;) {
        if (current.tokens > 0) {
          current.tokens -= 1;
          return { minute: current.minuteCount - current.tokens, day: current.dayCount - current.tokens, admitted: true };
        }
        if (current.exhausted) return { minute: current.minuteCount, day: current.dayCount, admitted: false };
        if (!current.pending) {
          const want = Math.max(leaseSize(limits, options.maxLease), current.demand);
          current.pending = reserveRequests(sql, organizationId, limits, windows, want)
            .then((r) => {
              current.tokens += r.granted;
              current.minuteCount = r.minuteCount;
              current.dayCount = r.dayCount;
              current.exhausted = r.granted === 0;
            })
            .finally(() => {
              current.pending = undefined;
            });
        }
        await current.pending;
      }
    } finally {
      current.demand -= 1;
    }
  }

  async function count(auth: AuthContext, log: FastifyBaseLogger): Promise<Record<string, string>> {
    const nowMs = now();
    if (nowMs - lastPrune >= pruneEveryMs) {
      lastPrune = nowMs;
      prune().catch((error: unknown) => log.warn({ err: error }, 'could not prune rate-limit windows'));
    }
    const { organizationId, plan, customLimits } = auth;
    const limits = limitsFor(plan, customLimits);
    const windows = windowsAt(nowMs);
    const decision = decide(await take(organizationId, limits, windows), limits, windows, nowMs);
    const headers = {
      'ratelimit-limit': String(decision.limit),
      'ratelimit-remaining': String(decision.remaining),
      'ratelimit-reset': String(decision.resetSeconds),
    };
    if (!decision.allowed) {
      throw new AppError(
        'RATE_LIMITED',
        `The organization's ${decision.window} limit of ${decision.limit} requests is used up; retry in ${decision.resetSeconds} s`,
        { window: decision.window, limit: decision.limit, retryAfterSeconds: decision.resetSeconds },
        { ...headers, 'retry-after': String(decision.resetSeconds) },
      );
    }
    return headers;
  }

  return {
    prune,
    count,
    async admit(request, reply) {
      reply.headers(await count(request.auth, request.log));
    },
  };
}
