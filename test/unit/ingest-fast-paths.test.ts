import { describe, expect, it } from 'vitest';
import { inStoredYears } from '../../src/contract/rules/iso-time.js';
import { jsonProblem } from '../../src/http/wire/json-bounds.js';
import { toSpanRows } from '../../src/traces/ingest/ingest.js';
import { fromStoredTime, toStoredTime } from '../../src/traces/model/stored-time.js';
import { isBefore, traceSchema } from '../../src/traces/model/schemas.js';

/**
 * The shortcuts ingest takes on its hot path (src/contract/iso-time.ts, span-schemas.ts isBefore,
 * ingest.ts shownTime, json-bounds.ts jsonProblem) against the plain rules they stand for, over
 * times and values built to cross every edge they skip.
 */

/** The rule the year check stands for: the UTC year of the instant. */
const yearRule = (iso: string) => {
  const year = new Date(Date.parse(iso)).getUTCFullYear();
  return year >= 1970 && year < 2100;
};
/** The rule isBefore stands for: milliseconds first, then the digits below them. */
const beforeRule = (a: string, b: string) => {
  const ms = Date.parse(a) - Date.parse(b);
  const sub = (iso: string) => Number((/\.(\d+)/.exec(iso)?.[1] ?? '').padEnd(9, '0').slice(3, 9));
  return ms < 0 || (ms === 0 && sub(a) < sub(b));
};

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const offsets = ['Z', '+00:00', '+23:59', '-23:59', '+05:30', '-01:00'];
const fractions = ['', '.5', '.123', '.123456', '.1234567'];

/** A deterministic spread of date-times: years across both edges, days at the ends of the year, every offset and fraction. */
function times(): string[] {
  const out: string[] = [];
  for (const year of [1968, 1969, 1970, 1971, 1999, 2025, 2098, 2099, 2100, 2101]) {
    for (const [month, day, hour] of [
      [1, 1, 0],
      [1, 1, 12],
      [6, 15, 9],
      [12, 31, 12],
      [12, 31, 23],
    ] as const) {
      for (const offset of offsets) {
        for (const fraction of fractions) out.push(`${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:59:59${fraction}${offset}`);
      }
    }
  }
  return out;
}

describe('ingest fast paths', () => {
  it('checks the stored years as the UTC year of the instant would, whatever the offset', () => {
    const all = times();
    expect(all.length).toBeGreaterThan(1000);
    for (const iso of all) expect(inStoredYears(iso), iso).toBe(yearRule(iso));
    // Both answers occur: the spread reaches past both edges.
    expect(all.filter(inStoredYears).length).toBeLessThan(all.length);
    expect(all.some(inStoredYears)).toBe(true);
  });

  it('orders two times as milliseconds then microseconds would, whether written alike or not', () => {
    const all = times().filter(yearRule);
    let compared = 0;
    for (let i = 0; i < all.length; i += 7) {
      for (let j = 0; j < all.length; j += 11) {
        expect(isBefore(all[i]!, all[j]!), `${all[i]} < ${all[j]}`).toBe(beforeRule(all[i]!, all[j]!));
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(10_000);
    // Times written alike that differ below the millisecond, or only in the text.
    expect(isBefore('2025-01-01T10:00:00.123455Z', '2025-01-01T10:00:00.123456Z')).toBe(true);
    expect(isBefore('2025-01-01T10:00:00.123456Z', '2025-01-01T10:00:00.123456Z')).toBe(false);
    expect(isBefore('2025-01-01T10:00:00.100Z', '2025-01-01T10:00:00.1Z')).toBe(false);
  });

  it('reports an end before its start only for valid times: a malformed start gets its own error alone', () => {
    const span = { spanId: 'a', name: 'n', kind: 'chain', durationMs: 1, status: 'ok' };
    const parsed = traceSchema.safeParse({
      traceId: 't',
      source: 'sdk',
      spans: [{ ...span, startTime: '2025-13-01T00:00:00.000Z', endTime: '2025-01-01T00:00:00.000Z' }],
    });
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['spans.0.startTime']);
    const reversed = traceSchema.safeParse({
      traceId: 't',
      source: 'sdk',
      spans: [{ ...span, startTime: '2025-01-01T00:00:01.000Z', endTime: '2025-01-01T00:00:00.000Z' }],
    });
    expect(reversed.error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)).toEqual([
      'spans.0.endTime: must not be before startTime',
    ]);
  });

  it('returns each span time as its stored form reads back, sent to the millisecond in UTC or not', () => {
    const sent = times().filter(yearRule);
    const spans = sent.map((time, i) => ({
      spanId: `s${i}`,
      name: 'n',
      kind: 'chain' as const,
      startTime: time,
      endTime: time,
      durationMs: 0,
      status: 'ok' as const,
    }));
    const rows = toSpanRows('w', [{ traceId: 't', source: 'sdk', spans }]);
    rows.forEach((row, i) => {
      const detail = JSON.parse(row.detail) as { startTime: string; endTime: string };
      expect(detail.startTime, sent[i]).toBe(fromStoredTime(toStoredTime(sent[i]!)));
      expect(detail.endTime).toBe(detail.startTime);
    });
  });

  it('finds the first problem of a JSON value with its whole path', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 40; i++) deep = i % 2 === 0 ? [deep] : { [`k${i}`]: deep };
    const problem = jsonProblem({ a: 1, b: { c: deep } });
    expect(problem?.message).toBe('nests deeper than 32 levels');
    // b, c, then 30 levels of the nested value: the path to the value at depth 32.
    expect(problem?.path.slice(0, 2)).toEqual(['b', 'c']);
    expect(problem?.path).toHaveLength(32);
    expect(jsonProblem({ a: [{ b: 'x\u0000y' }] }, { noNul: true })).toEqual({
      path: ['a', 0, 'b'],
      message: 'must not contain the NUL character (\\u0000)',
    });
    expect(jsonProblem({ a: [{ ['k\u0000']: 1 }] }, { noNul: true })).toEqual({
      path: ['a', 0, 'k\u0000'],
      message: 'key must not contain the NUL character (\\u0000)',
    });
    expect(jsonProblem({ a: [1, { b: [] }], c: 'ok' }, { noNul: true })).toBeUndefined();
  });
});
