import { describe, expect, it } from 'vitest';
import jstat from 'jstat';
import {
  figuresOf,
  mcNemarTest,
  pairedTTest,
  pairedTTestOf,
  quantile,
  stuartMaxwellTest,
  stuartMaxwellTestOf,
  verdictOf,
} from '../../src/statistics/statistics.js';

const { jStat } = jstat;

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

  it('gives the same test from the count, mean and variance of the differences', () => {
    const differences = drug2.map((v, i) => v - drug1[i]!);
    expect(pairedTTestOf(figuresOf(differences))).toEqual(pairedTTest(differences));
    expect(pairedTTestOf({ n: 10, mean: 1.58, variance: figuresOf(differences).variance })!.statistic).toBeCloseTo(4.0621, 4);
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

// Stuart (1955), unaided distance vision of 7,477 women (right eye by rows, left eye by columns,
// grades highest to lowest), the example of his test of marginal homogeneity: published
// Q = 11.96 with 3 df (also R's coin::mh_test(vision) and DescTools::StuartMaxwellTest).
const vision = [
  [1520, 266, 124, 66],
  [234, 1512, 432, 78],
  [117, 362, 1772, 205],
  [36, 82, 179, 492],
];
const grades = ['highest', 'second', 'third', 'lowest'];

/** One (right, left) pair per woman, from a square table of counts. */
const pairsOf = (table: number[][], labels: string[]) =>
  table.flatMap((row, i) => row.flatMap((count, j) => Array.from({ length: count }, () => [labels[i]!, labels[j]!] as const)));

/** The determinant of a square matrix by cofactors along the first row (small matrices only). */
const determinant = (m: number[][]): number =>
  m.length === 1
    ? m[0]![0]!
    : m[0]!.reduce((sum, v, j) => sum + (-1) ** j * v * determinant(m.slice(1).map((row) => row.filter((_, c) => c !== j))), 0);

describe('Stuart–Maxwell test', () => {
  it("gives Stuart's published Q of the vision data, and agrees with d′S⁻¹d solved by Cramer's rule", () => {
    const result = stuartMaxwellTest(pairsOf(vision, grades))!;
    expect(result.test).toBe('stuart_maxwell');
    expect(result.df).toBe(3);
    expect(result.statistic).toBeCloseTo(11.96, 2);
    // Independently: the margins' differences of the first three grades and their covariance,
    // S x = d solved by Cramer's rule, Q = d·x.
    const k = 3;
    const row = (i: number) => vision[i]!.reduce((a, b) => a + b, 0);
    const column = (i: number) => vision.reduce((a, r) => a + r[i]!, 0);
    const d = Array.from({ length: k }, (_, i) => row(i) - column(i));
    const s = Array.from({ length: k }, (_, i) =>
      Array.from({ length: k }, (_, j) => (i === j ? row(i) + column(i) - 2 * vision[i]![i]! : -(vision[i]![j]! + vision[j]![i]!))),
    );
    const x = d.map((_, c) => determinant(s.map((r, i) => r.map((v, j) => (j === c ? d[i]! : v)))) / determinant(s));
    const q = d.reduce((sum, di, i) => sum + di * x[i]!, 0);
    expect(result.statistic).toBeCloseTo(q, 8);
    // The chi-square tail with 3 df in closed form: 2(1 − Φ(√q)) + √(2q/π)·e^(−q/2).
    const tail = 2 * (1 - jStat.normal.cdf(Math.sqrt(q), 0, 1)) + Math.sqrt((2 * q) / Math.PI) * Math.exp(-q / 2);
    expect(result.pValue).toBeCloseTo(tail, 8);
    expect(result.pValue).toBeLessThan(0.01);
    expect(verdictOf(result, 0, true)).toBe('different');
  });

  it('gives the same Q from the table of transition counts as from the pairs', () => {
    const transitions = vision.flatMap((row, i) => row.map((n, j) => ({ baseline: grades[i]!, subject: grades[j]!, n })));
    expect(stuartMaxwellTestOf(transitions)).toEqual(stuartMaxwellTest(pairsOf(vision, grades)));
    expect(stuartMaxwellTestOf(transitions)!.statistic).toBeCloseTo(11.96, 2);
  });

  it('does not depend on the order of the categories (which one is left out)', () => {
    const relabelled = ['d-highest', 'c-second', 'b-third', 'a-lowest'];
    expect(stuartMaxwellTest(pairsOf(vision, relabelled))!.statistic).toBeCloseTo(stuartMaxwellTest(pairsOf(vision, grades))!.statistic, 8);
  });

  it("is McNemar's uncorrected statistic with two categories (Agresti's approval table: 17.36)", () => {
    const result = stuartMaxwellTest(
      pairsOf(
        [
          [794, 150],
          [86, 570],
        ],
        ['approve', 'disapprove'],
      ),
    )!;
    expect(result.df).toBe(1);
    expect(result.statistic).toBeCloseTo((150 - 86) ** 2 / (150 + 86), 10);
    expect(result.statistic).toBeCloseTo(17.36, 2);
  });

  it('leaves out categories no case changed, sums groups that changed only among themselves, and has no test without changes', () => {
    // a ↔ b and c ↔ d only, e never changed: two McNemar statistics, 2 df.
    const pairs = [
      ...pairsOf(
        [
          [5, 9],
          [3, 5],
        ],
        ['a', 'b'],
      ),
      ...pairsOf(
        [
          [2, 4],
          [8, 1],
        ],
        ['c', 'd'],
      ),
      ...pairsOf([[7]], ['e']),
    ];
    const result = stuartMaxwellTest(pairs)!;
    expect(result.df).toBe(2);
    expect(result.statistic).toBeCloseTo((9 - 3) ** 2 / 12 + (4 - 8) ** 2 / 12, 10);
    expect(result.pValue).toBeCloseTo(Math.exp(-result.statistic / 2), 10); // the chi-square tail with 2 df
    expect(
      stuartMaxwellTest(
        pairsOf(
          [
            [4, 0],
            [0, 6],
          ],
          ['a', 'b'],
        ),
      ),
    ).toBeNull();
    expect(stuartMaxwellTest([])).toBeNull();
    expect(
      verdictOf(
        stuartMaxwellTest(
          pairsOf(
            [
              [40, 3],
              [2, 40],
            ],
            ['x', 'y'],
          ),
        ),
        0,
        true,
      ),
    ).toBe('no significant difference');
  });
});
