import type { CredentialRequest } from './auth.js';
import { AppError } from '../../http/wire/errors.js';

export interface FailedAuthOptions {
  /** Failed attempts one client address may make per window before it gets 429. */
  maxFailures?: number;
  windowMs?: number;
  now?: () => number;
  /** Addresses tracked at most; beyond it the oldest windows are forgotten first. */
  maxClients?: number;
}

export interface FailedAuthLimiter {
  /** The 429 for a client address that failed too often in the current window, else undefined. */
  limited(request: Pick<CredentialRequest, 'ip'>): AppError | undefined;
  /** Throws limited(request), if any. */
  check(request: Pick<CredentialRequest, 'ip'>): void;
  /** Records one failed attempt (an unknown key or token, a wrong admin token). */
  record(request: Pick<CredentialRequest, 'ip'>): void;
}

/**
 * Failed authentication counted per client address, in this process. An address over the
 * limit only has its failures slowed: a valid credential from it still passes (behind a NAT
 * one misconfigured client must not lock out the others), while its invalid ones answer 429
 * instead of 401, found out without database work (authenticated.ts, key-directory.ts).
 * In process on purpose: the cap bounds memory, and with N replicas a guesser gets N times
 * the budget, which changes nothing against keys of 238 random bits.
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

  function limited(request: Pick<CredentialRequest, 'ip'>): AppError | undefined {
    const window = windows.get(request.ip);
    if (!window) return undefined;
    const elapsed = now() - window.start;
    if (elapsed >= windowMs) {
      windows.delete(request.ip);
      return undefined;
    }
    if (window.failures < maxFailures) return undefined;
    const retryAfter = Math.max(1, Math.ceil((windowMs - elapsed) / 1000));
    return new AppError(
      'RATE_LIMITED',
      `Too many failed authentication attempts from this address; retry in ${retryAfter} s`,
      { reason: 'too_many_failed_attempts', retryAfterSeconds: retryAfter },
      { 'retry-after': String(retryAfter) },
    );
  }

  return {
    limited,
    check(request) {
      const error = limited(request);
      if (error) throw error;
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
