import type { FastifyRequest } from 'fastify';
import { AppError } from '../http/errors.js';

export interface FailedAuthOptions {
  /** Failed attempts one client address may make per window before it gets 429. */
  maxFailures?: number;
  windowMs?: number;
  now?: () => number;
  /** Addresses tracked at most; beyond it the oldest windows are forgotten first. */
  maxClients?: number;
}

export interface FailedAuthLimiter {
  /** Throws 429 when the client address has failed too often in the current window. */
  check(request: FastifyRequest): void;
  /** Records one failed attempt (an unknown key or token, a wrong admin token). */
  record(request: FastifyRequest): void;
}

/**
 * Failed authentication counted per client address, in this process. In process on purpose:
 * the check runs before the credential is looked up, so a flood of guesses costs no database
 * work at all, and the cap bounds memory. With N replicas a guesser gets N times the budget,
 * which changes nothing against keys of 238 random bits: the key length makes guessing
 * hopeless, the limit stops floods.
 */
export function createFailedAuthLimiter(options: FailedAuthOptions = {}): FailedAuthLimiter {
  const maxFailures = options.maxFailures ?? 20;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const maxClients = options.maxClients ?? 100_000;
  const windows = new Map<string, { start: number; failures: number }>();

  /**
   * A window is (re)inserted when it starts, so the map is in start order: expired windows sit
   * at the front, and dropping from the front forgets the oldest first. Each entry is visited
   * once before it goes, so a flood from many addresses costs constant time per failure.
   */
  function forgetOldest() {
    const cutoff = now() - windowMs;
    for (const [address, window] of windows) {
      if (window.start > cutoff && windows.size < maxClients) break;
      windows.delete(address);
    }
  }

  return {
    check(request) {
      const window = windows.get(request.ip);
      if (!window) return;
      const elapsed = now() - window.start;
      if (elapsed >= windowMs) {
        windows.delete(request.ip);
        return;
      }
      if (window.failures >= maxFailures) {
        const retryAfter = Math.max(1, Math.ceil((windowMs - elapsed) / 1000));
        throw new AppError(
          'RATE_LIMITED',
          `Too many failed authentication attempts from this address; retry in ${retryAfter} s`,
          { reason: 'too_many_failed_attempts', retryAfterSeconds: retryAfter },
          { 'retry-after': String(retryAfter) },
        );
      }
    },
    record(request) {
      const at = now();
      const window = windows.get(request.ip);
      if (window && at - window.start < windowMs) {
        window.failures += 1;
        return;
      }
      windows.delete(request.ip);
      if (windows.size >= maxClients) forgetOldest();
      windows.set(request.ip, { start: at, failures: 1 });
    },
  };
}
