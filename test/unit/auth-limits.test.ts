import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { AppError } from '../../src/http/wire/errors.js';
import { createFailedAuthLimiter } from '../../src/tenancy/service/failed-auth.js';
import { oauthVerifierFromConfig } from '../../src/tenancy/service/oauth.js';
import { decide, leaseSize, limitsFor, windowsAt } from '../../src/tenancy/model/rate-limit-rules.js';
import type { Sql } from '../../src/stores/postgres.js';

describe('limitsFor', () => {
  it('follows the published plans and the enterprise organization own numbers', () => {
    const none = { perMinute: null, perDay: null };
    expect(limitsFor('free', none)).toEqual({ perMinute: 60, perDay: 1_000 });
    expect(limitsFor('pro', none)).toEqual({ perMinute: 300, perDay: 10_000 });
    // Stored numbers on a non-enterprise plan are ignored.
    expect(limitsFor('free', { perMinute: 5000, perDay: 5000 })).toEqual({ perMinute: 60, perDay: 1_000 });
    expect(limitsFor('enterprise', { perMinute: 7, perDay: 70 })).toEqual({ perMinute: 7, perDay: 70 });
    expect(limitsFor('enterprise', { perMinute: 7, perDay: null })).toEqual({ perMinute: 7, perDay: 10_000 });
  });
});

describe('leaseSize', () => {
  it('reserves 1% of the tighter limit, one at a time for small plans, at most 100 or the given cap', () => {
    expect(leaseSize({ perMinute: 60, perDay: 1_000 })).toBe(1);
    expect(leaseSize({ perMinute: 300, perDay: 10_000 })).toBe(3);
    expect(leaseSize({ perMinute: 1_000_000, perDay: 5_000 })).toBe(50);
    expect(leaseSize({ perMinute: 1e9, perDay: 1e9 })).toBe(100);
    expect(leaseSize({ perMinute: 1e9, perDay: 1e9 }, 1)).toBe(1);
  });
});

describe('windowsAt', () => {
  it('gives the UTC minute and day containing the instant', () => {
    const w = windowsAt(Date.UTC(2030, 0, 31, 23, 59, 59, 999));
    expect(w.minuteStart.toISOString()).toBe('2030-01-31T23:59:00.000Z');
    expect(w.dayStart.toISOString()).toBe('2030-01-31T00:00:00.000Z');
    expect(windowsAt(Date.UTC(2030, 1, 1)).dayStart.toISOString()).toBe('2030-02-01T00:00:00.000Z');
  });
});

describe('decide', () => {
  const limits = { perMinute: 10, perDay: 100 };
  const at = Date.UTC(2030, 0, 1, 12, 0, 30, 500);
  const windows = windowsAt(at);

  it('reports the window with fewer requests left', () => {
    expect(decide({ minute: 3, day: 50, admitted: true }, limits, windows, at)).toEqual({
      allowed: true,
      window: 'minute',
      limit: 10,
      remaining: 7,
      resetSeconds: 30,
    });
    expect(decide({ minute: 3, day: 95, admitted: true }, limits, windows, at)).toMatchObject({
      window: 'day',
      remaining: 5,
      resetSeconds: 43_170,
    });
  });

  it('refuses on the exhausted window that frees up last', () => {
    expect(decide({ minute: 11, day: 40, admitted: false }, limits, windows, at)).toMatchObject({
      allowed: false,
      window: 'minute',
      remaining: 0,
    });
    expect(decide({ minute: 4, day: 100, admitted: false }, limits, windows, at)).toMatchObject({
      allowed: false,
      window: 'day',
      remaining: 0,
    });
    expect(decide({ minute: 11, day: 100, admitted: false }, limits, windows, at)).toMatchObject({ window: 'day' });
  });

  it('never answers a reset below one second', () => {
    const edge = Date.UTC(2030, 0, 1, 12, 0, 59, 999);
    expect(decide({ minute: 1, day: 1, admitted: true }, limits, windowsAt(edge), edge).resetSeconds).toBe(1);
  });
});

describe('createFailedAuthLimiter', () => {
  const request = (ip: string) => ({ ip }) as FastifyRequest;
  const refused = (fn: () => void) => {
    try {
      fn();
      return undefined;
    } catch (error) {
      return error as AppError;
    }
  };

  it('refuses an address after its failures, for the rest of its window only', () => {
    let clock = 1_000_000;
    const limiter = createFailedAuthLimiter({ maxFailures: 3, windowMs: 60_000, now: () => clock });
    for (let i = 0; i < 3; i += 1) {
      expect(refused(() => limiter.check(request('a')))).toBeUndefined();
      limiter.record(request('a'));
    }
    clock += 15_000;
    const error = refused(() => limiter.check(request('a')));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', headers: { 'retry-after': '45' } });
    expect(refused(() => limiter.check(request('b')))).toBeUndefined();
    clock += 45_000;
    expect(refused(() => limiter.check(request('a')))).toBeUndefined();
  });

  it('keeps at most maxClients addresses, forgetting the oldest', () => {
    const limiter = createFailedAuthLimiter({ maxFailures: 1, maxClients: 2, now: () => 0 });
    for (const ip of ['a', 'b', 'c']) limiter.record(request(ip));
    expect(refused(() => limiter.check(request('a')))).toBeUndefined();
    expect(refused(() => limiter.check(request('c')))).toBeInstanceOf(AppError);
  });

  it('forgets expired windows before live ones when full', () => {
    let clock = 0;
    const limiter = createFailedAuthLimiter({ maxFailures: 1, maxClients: 2, windowMs: 60_000, now: () => clock });
    limiter.record(request('a'));
    clock = 30_000;
    limiter.record(request('b'));
    clock = 61_000;
    limiter.record(request('c'));
    expect(refused(() => limiter.check(request('b')))).toBeInstanceOf(AppError);
    expect(refused(() => limiter.check(request('c')))).toBeInstanceOf(AppError);
  });
});

describe('oauthVerifierFromConfig', () => {
  const sql = {} as Sql; // never queried: building a verifier does no I/O
  it('is off without settings and refuses partial settings', () => {
    expect(oauthVerifierFromConfig(sql, loadConfig({}))).toBeUndefined();
    expect(() => oauthVerifierFromConfig(sql, loadConfig({ LOUPE_OAUTH_JWKS_URL: 'https://issuer.test/jwks' }))).toThrow(/set together/);
    const full = loadConfig({
      LOUPE_OAUTH_JWKS_URL: 'https://issuer.test/jwks',
      LOUPE_OAUTH_ISSUER: 'https://issuer.test',
      LOUPE_OAUTH_AUDIENCE: 'loupe',
    });
    expect(typeof oauthVerifierFromConfig(sql, full)).toBe('function');
  });
});
