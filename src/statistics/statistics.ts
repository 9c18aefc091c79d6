import jstat from 'jstat';

/**
 * The tests of a comparison between two groups of scores, from the figures the engine sums
 * (count, mean, sample variance, counts per category): Welch's t for numeric scores, the
 * two-proportion z test for boolean ones, Pearson's chi-square of independence for categorical
 * ones; for paired values (the same cases in two runs) the paired t test, McNemar's test and
 * the Stuart–Maxwell test of marginal homogeneity (paired categories);
 * 95% intervals of each group's mean (Student's t; Wilson's for a proportion). The
 * distributions are jstat's; nothing here is hand-rolled but the textbook formulas over them.
 * Shared by the features that compare (scores: prompt versions; datasets: runs).
 */

const { jStat } = jstat;
export const confidenceLevel = 0.95;
const alpha = 1 - confidenceLevel;

export interface Interval {
  low: number;
  high: number;
}

export type TestName =
  'welch_t' | 'two_proportions_z' | 'chi_square' | 'paired_t' | 'mcnemar_exact' | 'mcnemar_chi_square' | 'stuart_maxwell';

export interface TestResult<Name extends TestName = TestName> {
  test: Name;
  /** t, z or the chi-square statistic. */
  statistic: number;
  /** Degrees of freedom (Welch's df is fractional); null for the z test. */
  df: number | null;
  pValue: number;
}

/** Student's t interval of a mean; null with fewer than two values or no spread to speak of. */
export function meanInterval(n: number, mean: number, variance: number): Interval | null {
  if (n < 2 || !Number.isFinite(variance)) return null;
  const half = jStat.studentt.inv(1 - alpha / 2, n - 1) * Math.sqrt(variance / n);
  return { low: mean - half, high: mean + half };
}

/** Wilson's score interval of a proportion of `successes` in `n`. */
export function proportionInterval(successes: number, n: number): Interval | null {
  if (n === 0) return null;
  const z = jStat.normal.inv(1 - alpha / 2, 0, 1);
  const p = successes / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return { low: centre - half, high: centre + half };
}

export interface GroupFigures {
  n: number;
  mean: number;
  /** Sample variance (n - 1 in the denominator). */
  variance: number;
}

/** Welch's t test of mean(b) − mean(a); null when either group has fewer than two values or both have no spread. */
export function welchTest(a: GroupFigures, b: GroupFigures): TestResult<'welch_t'> | null {
  if (a.n < 2 || b.n < 2) return null;
  const va = a.variance / a.n;
  const vb = b.variance / b.n;
  if (va + vb === 0) return null;
  const statistic = (b.mean - a.mean) / Math.sqrt(va + vb);
  const df = (va + vb) ** 2 / (va ** 2 / (a.n - 1) + vb ** 2 / (b.n - 1));
  const pValue = 2 * (1 - jStat.studentt.cdf(Math.abs(statistic), df));
  return { test: 'welch_t', statistic, df, pValue };
}

/** The pooled two-proportion z test of p(b) − p(a); null when a group is empty or the pooled proportion is 0 or 1. */
export function twoProportionsTest(
  a: { successes: number; n: number },
  b: { successes: number; n: number },
): TestResult<'two_proportions_z'> | null {
  if (a.n === 0 || b.n === 0) return null;
  const pooled = (a.successes + b.successes) / (a.n + b.n);
  if (pooled === 0 || pooled === 1) return null;
  const statistic = (b.successes / b.n - a.successes / a.n) / Math.sqrt(pooled * (1 - pooled) * (1 / a.n + 1 / b.n));
  const pValue = 2 * (1 - jStat.normal.cdf(Math.abs(statistic), 0, 1));
  return { test: 'two_proportions_z', statistic, df: null, pValue };
}

/**
 * Pearson's chi-square test of independence of group × category (counts per category label);
 * categories neither group has are left out; null with fewer than two categories or an empty group.
 */
export function chiSquareTest(a: Record<string, number>, b: Record<string, number>): TestResult<'chi_square'> | null {
  const labels = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((l) => (a[l] ?? 0) + (b[l] ?? 0) > 0);
  const totalA = labels.reduce((s, l) => s + (a[l] ?? 0), 0);
  const totalB = labels.reduce((s, l) => s + (b[l] ?? 0), 0);
  if (labels.length < 2 || totalA === 0 || totalB === 0) return null;
  const total = totalA + totalB;
  let statistic = 0;
  for (const label of labels) {
    const column = (a[label] ?? 0) + (b[label] ?? 0);
    for (const [observed, rowTotal] of [
      [a[label] ?? 0, totalA],
      [b[label] ?? 0, totalB],
    ] as const) {
      const expected = (rowTotal * column) / total;
      statistic += (observed - expected) ** 2 / expected;
    }
  }
  const df = labels.length - 1;
  return { test: 'chi_square', statistic, df, pValue: 1 - jStat.chisquare.cdf(statistic, df) };
}

/** Count, mean and sample variance of values (jstat's), the figures `meanInterval` and `welchTest` take. */
export function figuresOf(values: number[]): GroupFigures {
  return {
    n: values.length,
    mean: values.length === 0 ? Number.NaN : jStat.mean(values),
    variance: values.length < 2 ? Number.NaN : jStat.variance(values, true),
  };
}

/** The `p` quantile (0 to 1) of values, interpolated between the closest ranks (as the engine's quantileExactInclusive); null without values. */
export function quantile(values: number[], p: number): number | null {
  // R's type 7 (alphap = betap = 1): linear between closest ranks. Of one value, that value (as
  // R answers); jStat answers NaN for it, which a run of one item with a latency met.
  if (values.length === 0) return null;
  return values.length === 1 ? values[0]! : jStat.quantiles(values, [p], 1, 1)[0]!;
}

/**
 * The paired t test of the mean of `differences` (subject − baseline, one per case present in
 * both) against 0; null with fewer than two pairs or differences without spread.
 */
export function pairedTTest(differences: number[]): TestResult<'paired_t'> | null {
  return pairedTTestOf(figuresOf(differences));
}

/**
 * The paired t test from the differences' count, mean and sample variance (as the engine sums
 * them); null with fewer than two pairs or differences without spread.
 */
export function pairedTTestOf({ n, mean, variance }: GroupFigures): TestResult<'paired_t'> | null {
  if (n < 2) return null;
  if (!(variance > 0)) return null;
  const statistic = mean / Math.sqrt(variance / n);
  const df = n - 1;
  return { test: 'paired_t', statistic, df, pValue: 2 * (1 - jStat.studentt.cdf(Math.abs(statistic), df)) };
}

/** Below this many discordant pairs McNemar's test is the exact binomial one, from it the chi-square with continuity correction. */
export const mcNemarExactBelow = 25;

/**
 * McNemar's test of paired booleans from the discordant pairs: `baselineOnly` cases true in the
 * baseline alone, `subjectOnly` true in the subject alone. Exact (two-sided binomial, p = ½) with
 * fewer than 25 discordant pairs, else the chi-square with continuity correction (df 1); null
 * without discordant pairs.
 */
export function mcNemarTest(baselineOnly: number, subjectOnly: number): TestResult<'mcnemar_exact' | 'mcnemar_chi_square'> | null {
  const discordant = baselineOnly + subjectOnly;
  if (discordant === 0) return null;
  if (discordant < mcNemarExactBelow) {
    const pValue = Math.min(1, 2 * jStat.binomial.cdf(Math.min(baselineOnly, subjectOnly), discordant, 0.5));
    return { test: 'mcnemar_exact', statistic: subjectOnly - baselineOnly, df: null, pValue };
  }
  const statistic = (Math.abs(subjectOnly - baselineOnly) - 1) ** 2 / discordant;
  return { test: 'mcnemar_chi_square', statistic, df: 1, pValue: 1 - jStat.chisquare.cdf(statistic, 1) };
}

/** How many cases are in `baseline` in the baseline and in `subject` in the subject. */
export interface CategoryTransition {
  baseline: string;
  subject: string;
  n: number;
}

/** The counts of a square table of paired categories: `n(a, b)` cases in `a` in the baseline and `b` in the subject. */
function pairTable(transitions: readonly CategoryTransition[]) {
  const counts = new Map<string, number>();
  const key = (a: string, b: string) => JSON.stringify([a, b]);
  for (const { baseline: a, subject: b, n } of transitions) if (n > 0) counts.set(key(a, b), (counts.get(key(a, b)) ?? 0) + n);
  const categories = [...new Set(transitions.filter((t) => t.n > 0).flatMap((t) => [t.baseline, t.subject]))].sort();
  const n = (a: string, b: string) => counts.get(key(a, b)) ?? 0;
  return {
    categories,
    n,
    rowTotal: (c: string) => categories.reduce((sum, o) => sum + n(c, o), 0),
    columnTotal: (c: string) => categories.reduce((sum, o) => sum + n(o, c), 0),
  };
}

/** Groups of categories that cases moved between (directly or through others); categories no case left or entered are in none. */
function changeGroups(categories: string[], moved: (a: string, b: string) => boolean): string[][] {
  const groups: string[][] = [];
  const seen = new Set<string>();
  for (const start of categories) {
    if (seen.has(start) || !categories.some((o) => o !== start && moved(start, o))) continue;
    const group = [start];
    seen.add(start);
    for (let k = 0; k < group.length; k++)
      for (const o of categories) {
        if (seen.has(o) || !moved(group[k]!, o)) continue;
        seen.add(o);
        group.push(o);
      }
    groups.push(group);
  }
  return groups;
}

/**
 * The Stuart–Maxwell test of marginal homogeneity of paired categories (Stuart 1955, Maxwell
 * 1970): whether the categories' shares differ between baseline and subject over the same
 * cases. `pairs` are (baseline category, subject category), one per case. With d the
 * differences of the margins (baseline − subject) of all categories but one and S their
 * covariance (S_ii = n_i· + n_·i − 2 n_ii, S_ij = −(n_ij + n_ji)), the statistic d′ S⁻¹ d is
 * chi-square with k − 1 df; S is inverted by jstat. A category no case moved into or out of
 * tells nothing and is left out; categories that cases moved between only among themselves
 * form a group whose margins cannot differ from the rest's, so the statistic is the sum of
 * each group's (one category of each left out) and df the categories left minus the groups
 * (the generalized inverse's answer). Null when no case changed category. With two categories
 * it is McNemar's statistic without continuity correction.
 */
export function stuartMaxwellTest(pairs: readonly (readonly [string, string])[]): TestResult<'stuart_maxwell'> | null {
  return stuartMaxwellTestOf(pairs.map(([baseline, subject]) => ({ baseline, subject, n: 1 })));
}

/** The Stuart–Maxwell test from the table of transitions (counts of each baseline, subject pair of categories). */
export function stuartMaxwellTestOf(transitions: readonly CategoryTransition[]): TestResult<'stuart_maxwell'> | null {
  const { categories, n, rowTotal, columnTotal } = pairTable(transitions);
  const groups = changeGroups(categories, (a, b) => n(a, b) + n(b, a) > 0);
  if (groups.length === 0) return null;
  let statistic = 0;
  let df = 0;
  for (const group of groups) {
    const kept = group.slice(0, -1);
    const d = kept.map((c) => rowTotal(c) - columnTotal(c));
    const s = kept.map((ci, i) =>
      kept.map((cj, j) => (i === j ? rowTotal(ci) + columnTotal(ci) - 2 * n(ci, ci) : -(n(ci, cj) + n(cj, ci)))),
    );
    const inverse = jStat.inv(s);
    statistic += d.reduce((sum, di, i) => sum + di * d.reduce((row, dj, j) => row + inverse[i]![j]! * dj, 0), 0);
    df += kept.length;
  }
  return { test: 'stuart_maxwell', statistic, df, pValue: 1 - jStat.chisquare.cdf(statistic, df) };
}

export type Verdict = 'better' | 'worse' | 'no significant difference' | 'different';

/**
 * The verdict on the subject against the baseline: no significant difference unless p < 0.05;
 * then better or worse by the sign of the difference of means and the direction (higher is
 * better unless the config says otherwise), or `different` when the means do not tell a
 * direction (categories without values).
 */
export function verdictOf(test: TestResult | null, difference: number, higherIsBetter: boolean): Verdict {
  if (!test || !(test.pValue < alpha)) return 'no significant difference';
  if (difference === 0) return 'different';
  return difference > 0 === higherIsBetter ? 'better' : 'worse';
}
