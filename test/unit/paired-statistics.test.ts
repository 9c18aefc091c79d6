import { describe, expect, it } from 'vitest';
import { mcNemarTest, pairedTTest, quantile, verdictOf } from '../../src/statistics/statistics.js';

// Student (1908), the `sleep` data: extra hours of sleep of ten patients under two drugs.
// Published paired t test (R, `t.test(extra ~ group, data = sleep, paired = TRUE)`):
// t = -4.0621, df = 9, p-value = 0.002833 (drug 1 − drug 2).
const drug1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
const drug2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

describe('paired t test', () => {
  it("gives the published t, df and p of Student's sleep data", () => {
    const result = pairedTTest(drug1.map((v, i) => v - drug2[i]!))!;
    expect(result.test).toBe('paired_t');
    expect(result.statistic).toBeCloseTo(-4.0621, 4);
    expect(result.df).toBe(9);
    expect(result.pValue).toBeCloseTo(0.002833, 6);
    // The other way round: the same test, the sign flipped; drug 2 is better.
    const reverse = pairedTTest(drug2.map((v, i) => v - drug1[i]!))!;
    expect(reverse.statistic).toBeCloseTo(4.0621, 4);
    expect(verdictOf(reverse, 1.58, true)).toBe('better');
    expect(verdictOf(reverse, 1.58, false)).toBe('worse');
  });

  it('has no test with fewer than two pairs or differences without spread', () => {
    expect(pairedTTest([1])).toBeNull();
    expect(pairedTTest([2, 2, 2])).toBeNull();
    expect(verdictOf(pairedTTest([2, 2, 2]), 2, true)).toBe('no significant difference');
  });
});

// Agresti, Categorical Data Analysis: presidential approval of 1,600 people in two surveys,
// approve/approve 794, approve/disapprove 150, disapprove/approve 86, disapprove/disapprove 570;
// published McNemar z² = 17.36 (without continuity correction), p < 0.001.
describe("McNemar's test", () => {
  it('gives the chi-square with continuity correction of the published table, and its p', () => {
    const [approveThenNot, notThenApprove] = [150, 86];
    const discordant = approveThenNot + notThenApprove;
    // The table is the published one: the uncorrected statistic is Agresti's 17.36.
    expect((approveThenNot - notThenApprove) ** 2 / discordant).toBeCloseTo(17.36, 2);
    const result = mcNemarTest(approveThenNot, notThenApprove)!;
    expect(result.test).toBe('mcnemar_chi_square');
    const corrected = (Math.abs(approveThenNot - notThenApprove) - 1) ** 2 / discordant;
    expect(result.statistic).toBeCloseTo(corrected, 10);
    expect(result.statistic).toBeCloseTo(16.818, 3);
    expect(result.df).toBe(1);
    // chi-square(1) tail = the two tails of a standard normal beyond √x: 2·(1 − Φ(4.1010)) = 4.115e-05.
    expect(result.pValue).toBeCloseTo(4.115e-5, 8);
    // Fewer approve in the second survey: with approval as the score, worse.
    expect(verdictOf(result, (notThenApprove - approveThenNot) / 1600, true)).toBe('worse');
  });

  it('is the exact two-sided binomial test with few discordant pairs', () => {
    // 1 pair true in the baseline alone, 9 in the subject alone: p = 2·P(X ≤ 1), X ~ Bin(10, ½) = 2·11/1024.
    const result = mcNemarTest(1, 9)!;
    expect(result.test).toBe('mcnemar_exact');
    expect(result.pValue).toBeCloseTo((2 * (1 + 10)) / 1024, 12);
    // Balanced discordance: p capped at 1.
    expect(mcNemarTest(3, 3)!.pValue).toBe(1);
    expect(mcNemarTest(0, 0)).toBeNull();
  });
});

describe('quantile', () => {
  it('interpolates between the closest ranks', () => {
    expect(quantile([10, 1, 4, 3, 2], 0.5)).toBe(3);
    // rank 0.95 · 4 = 3.8: 4 + 0.8 · (10 − 4).
    expect(quantile([10, 1, 4, 3, 2], 0.95)).toBeCloseTo(8.8, 10);
    expect(quantile([], 0.5)).toBeNull();
    expect(quantile([2400], 0.5)).toBe(2400);
    expect(quantile([2400], 0.95)).toBe(2400);
  });
});
