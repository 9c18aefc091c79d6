import { describe, expect, it } from 'vitest';
import {
  chiSquareTest,
  meanInterval,
  proportionInterval,
  twoProportionsTest,
  verdictOf,
  welchTest,
} from '../../src/statistics/statistics.js';

/** Figures of a sample, computed here from its values. */
function figures(values: number[]) {
  const n = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1);
  return { n, mean, variance };
}

describe('statistics of a comparison', () => {
  // Welch's t-test, Wikipedia "Welch's t-test", example 1: published t = −2.46, ν ≈ 25.0, p = 0.021
  // for A1 − A2 (the difference here is b − a, so the sign turns).
  const a1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
  const a2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];

  it("Welch's t: the textbook's t, df and p", () => {
    const result = welchTest(figures(a1), figures(a2))!;
    expect(result.test).toBe('welch_t');
    expect(result.statistic).toBeCloseTo(2.46, 2);
    expect(result.df).toBeCloseTo(24.99, 1);
    expect(result.pValue).toBeCloseTo(0.021, 3);
    expect(welchTest(figures([1]), figures(a2))).toBeNull();
    expect(welchTest(figures([2, 2]), figures([2, 2, 2]))).toBeNull();
  });

  it("a mean's 95% interval uses Student's t quantile (t(0.975, 14) = 2.1448 from the table)", () => {
    const f = figures(a1);
    const interval = meanInterval(f.n, f.mean, f.variance)!;
    const half = 2.1448 * Math.sqrt(f.variance / f.n);
    expect(interval.low).toBeCloseTo(f.mean - half, 3);
    expect(interval.high).toBeCloseTo(f.mean + half, 3);
    expect(meanInterval(1, 3, Number.NaN)).toBeNull();
  });

  it('two proportions: z and p for 45/100 against 60/100 (chi-square without correction 4.5113, p 0.03367)', () => {
    const result = twoProportionsTest({ successes: 45, n: 100 }, { successes: 60, n: 100 })!;
    expect(result.statistic ** 2).toBeCloseTo(4.5113, 3);
    expect(result.statistic).toBeGreaterThan(0);
    expect(result.pValue).toBeCloseTo(0.03367, 4);
    expect(twoProportionsTest({ successes: 0, n: 10 }, { successes: 0, n: 10 })).toBeNull();
  });

  it('chi-square of a 2×2 table: 0.7937 with df 1 and p 0.373; a 2×2 chi-square is the square of z', () => {
    const result = chiSquareTest({ x: 10, y: 20 }, { x: 30, y: 40 })!;
    // Expected counts 12, 18, 28, 42: 4/12 + 4/18 + 4/28 + 4/42.
    expect(result.statistic).toBeCloseTo(4 / 12 + 4 / 18 + 4 / 28 + 4 / 42, 10);
    expect(result.df).toBe(1);
    expect(result.pValue).toBeCloseTo(0.373, 3);
    const z = twoProportionsTest({ successes: 10, n: 30 }, { successes: 30, n: 70 })!;
    expect(result.statistic).toBeCloseTo(z.statistic ** 2, 10);
    expect(result.pValue).toBeCloseTo(z.pValue, 10);
    // Three categories: df 2; a category neither group has is left out.
    expect(chiSquareTest({ a: 5, b: 5, c: 5, d: 0 }, { a: 1, b: 5, c: 9 })!.df).toBe(2);
    expect(chiSquareTest({ a: 5 }, { a: 9 })).toBeNull();
  });

  it("Wilson's interval of a proportion (45 of 100: 0.3561 to 0.5475)", () => {
    const interval = proportionInterval(45, 100)!;
    expect(interval.low).toBeCloseTo(0.3561, 3);
    expect(interval.high).toBeCloseTo(0.5475, 3);
  });

  it('verdicts follow p < 0.05 and the direction', () => {
    const significant = { test: 'welch_t' as const, statistic: 3, df: 10, pValue: 0.01 };
    expect(verdictOf(significant, 1, true)).toBe('better');
    expect(verdictOf(significant, 1, false)).toBe('worse');
    expect(verdictOf(significant, -1, true)).toBe('worse');
    expect(verdictOf(significant, 0, true)).toBe('different');
    expect(verdictOf({ ...significant, pValue: 0.2 }, 1, true)).toBe('no significant difference');
    expect(verdictOf(null, 1, true)).toBe('no significant difference');
  });
});
