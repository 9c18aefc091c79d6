// The parts of jstat (https://jstat.github.io) the comparisons use; the package ships no types.
declare module 'jstat' {
  interface ContinuousDistribution {
    cdf(x: number, ...parameters: number[]): number;
    inv(p: number, ...parameters: number[]): number;
  }
  export const jStat: {
    studentt: ContinuousDistribution;
    chisquare: ContinuousDistribution;
    normal: ContinuousDistribution;
    binomial: { cdf(k: number, n: number, p: number): number };
    /** The inverse of a square matrix (rows of numbers). */
    inv(matrix: number[][]): number[][];
    mean(values: number[]): number;
    /** `sample`: n − 1 in the denominator. */
    variance(values: number[], sample: boolean): number;
    /** Quantiles `ps` (0 to 1) with plotting positions alphap, betap (1, 1: R's type 7). */
    quantiles(values: number[], ps: number[], alphap: number, betap: number): number[];
  };
}
