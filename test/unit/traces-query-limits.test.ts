import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, queryDigest } from '../../src/traces/model/cursor.js';
import { limitSettings, resolveWindow, type QueryLimits } from '../../src/traces/model/query-limits.js';
import { AppError } from '../../src/http/wire/errors.js';
import { queryTooExpensive } from '../../src/http/requests/error-handler.js';

const limits: QueryLimits = { maxMemoryBytes: 2 * 1024 ** 3, maxExecutionMs: 15_000, maxWindowDays: 92, searchScanFrom: 2000 };
const day = 24 * 3600_000;
const now = Date.parse('2026-05-31T00:00:00.000Z');

function issueOf(run: () => unknown) {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return { code: (error as AppError).code, issue: ((error as AppError).details.issues as unknown[])[0] };
  }
  throw new Error('did not throw');
}

describe('resolveWindow', () => {
  it('defaults to the last 30 days, or the 30 days before startBefore, or from startAfter to now', () => {
    expect(resolveWindow(undefined, undefined, limits, undefined, now)).toEqual({
      from: new Date(now - 30 * day).toISOString(),
      to: new Date(now).toISOString(),
    });
    expect(resolveWindow(undefined, '2026-03-31T00:00:00Z', limits, undefined, now)).toEqual({
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-03-31T00:00:00Z',
    });
    expect(resolveWindow('2026-05-01T00:00:00Z', undefined, limits, undefined, now)).toEqual({
      from: '2026-05-01T00:00:00Z',
      to: new Date(now).toISOString(),
    });
  });

  it('refuses a window over the maximum or reversed, naming the lower bound', () => {
    expect(resolveWindow('2026-03-01T00:00:00Z', '2026-06-01T00:00:00Z', limits, undefined, now)).toBeDefined(); // 92 days
    expect(issueOf(() => resolveWindow('2026-03-01T00:00:00Z', '2026-06-01T00:00:01Z', limits, undefined, now))).toEqual({
      code: 'VALIDATION_ERROR',
      issue: { path: 'querystring.startAfter', message: expect.stringContaining('at most 92 days') },
    });
    expect(issueOf(() => resolveWindow('2025-01-01T00:00:00Z', undefined, limits, { from: 'from', to: 'to' }, now)).issue).toMatchObject({
      path: 'querystring.from',
    });
    expect(issueOf(() => resolveWindow('2026-03-02T00:00:00Z', '2026-03-01T00:00:00Z', limits, undefined, now)).issue).toMatchObject({
      message: 'must not be after startBefore',
    });
  });
});

describe('limitSettings', () => {
  it('puts the limits in the statement; a small memory limit is tracked in small steps', () => {
    expect(limitSettings(limits)).toBe(
      `SETTINGS max_memory_usage = ${2 * 1024 ** 3}, max_execution_time = 15, timeout_overflow_mode = 'throw', distributed_product_mode = 'global'`,
    );
    expect(limitSettings({ ...limits, maxMemoryBytes: 64_000, maxExecutionMs: 250 })).toBe(
      "SETTINGS max_memory_usage = 64000, max_untracked_memory = 1000, max_execution_time = 0.25, timeout_overflow_mode = 'throw', distributed_product_mode = 'global'",
    );
  });
});

describe('cursors', () => {
  it('round-trip, and are refused with other parameters or when forged', () => {
    const digest = queryDigest({ userId: 'u1', tag: ['a', 'b'], limit: 5, cursor: 'x' });
    expect(queryDigest({ tag: ['a', 'b'], userId: 'u1', limit: 50, offset: 0 })).toBe(digest);
    const cursor = encodeCursor({
      q: digest,
      k: '2026-03-01 10:00:00.000000',
      id: 't1',
      w: ['2026-02-01T00:00:00Z', '2026-03-02T00:00:00Z'],
      t: 7,
    });
    expect(decodeCursor(cursor, digest)).toMatchObject({ k: '2026-03-01 10:00:00.000000', id: 't1', t: 7 });
    expect(issueOf(() => decodeCursor(cursor, queryDigest({ userId: 'u2' }))).issue).toMatchObject({ path: 'querystring.cursor' });
    for (const forged of ['%%%', Buffer.from('[1]').toString('base64url'), encodeCursor({ q: digest, k: 'k', id: 'i', w: ['x', 'y'] })]) {
      expect(issueOf(() => decodeCursor(forged, digest)).issue).toMatchObject({ path: 'querystring.cursor' });
    }
  });
});

describe('queryTooExpensive', () => {
  class ClickHouseError extends Error {
    constructor(
      readonly code: string,
      readonly type: string,
    ) {
      super('limit');
    }
  }
  it('maps the engine limit errors to 422 QUERY_TOO_EXPENSIVE, nothing else', () => {
    expect(queryTooExpensive(new ClickHouseError('241', 'MEMORY_LIMIT_EXCEEDED'))).toMatchObject({
      code: 'QUERY_TOO_EXPENSIVE',
      status: 422,
      details: { limit: 'memory' },
    });
    expect(queryTooExpensive(new ClickHouseError('159', 'TIMEOUT_EXCEEDED'))).toMatchObject({ status: 422, details: { limit: 'time' } });
    expect(queryTooExpensive(new ClickHouseError('62', 'SYNTAX_ERROR'))).toBeUndefined();
    expect(queryTooExpensive(Object.assign(new Error('x'), { code: '241' }))).toBeUndefined();
  });
});
