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
  };
}
