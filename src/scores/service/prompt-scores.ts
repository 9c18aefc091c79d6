import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import type { PromptScores, PromptVersionRef, ScoreComparison } from '../../contract/prompt-scores.js';
import type { ScoreAverages } from '../../contract/trace-scores.js';
import {
  chiSquareTest,
  meanInterval,
  proportionInterval,
  twoProportionsTest,
  verdictOf,
  welchTest,
  type TestResult,
} from '../../statistics/statistics.js';
import { toStoredTime } from '../model/stored-time.js';
import { selectScoreConfigsByName } from '../tables/configs-table.js';
import { selectPromptScoreFigures } from '../tables/prompt-version-scores-table.js';

type FigureRow = Awaited<ReturnType<typeof selectPromptScoreFigures>>[number];
type DataType = ScoreComparison['dataType'];

/** One side's scores of one name: count, mean, sample variance, and counts per category. */
interface Side {
  dataType: DataType;
  n: number;
  mean: number;
  variance: number;
  distribution: Record<string, number>;
}

/** Rows of one version → per score name, its categories' rows summed into one side. */
function sidesOf(rows: FigureRow[]): Map<string, Side> {
  const sides = new Map<string, Side>();
  for (const row of rows) {
    const side = sides.get(row.name) ?? { dataType: row.data_type, n: 0, mean: 0, variance: Number.NaN, distribution: {} };
    const n = side.n + row.n;
    side.mean = (side.mean * side.n + row.mean * row.n) / n;
    side.n = n;
    if (row.data_type === 'categorical') side.distribution[row.category] = row.n;
    else side.variance = row.variance ?? Number.NaN;
    sides.set(row.name, side);
  }
  return sides;
}

const window = (w: { startAfter?: string | undefined; startBefore?: string | undefined }) => ({
  startAfter: w.startAfter === undefined ? undefined : toStoredTime(w.startAfter),
  startBefore: w.startBefore === undefined ? undefined : toStoredTime(w.startBefore),
});

const emptySide = (dataType: DataType): Side => ({ dataType, n: 0, mean: Number.NaN, variance: Number.NaN, distribution: {} });

function compareSides(name: string, subject: Side, baseline: Side, higherIsBetter: boolean): ScoreComparison {
  const dataType = subject.n > 0 ? subject.dataType : baseline.dataType;
  let test: TestResult<'welch_t' | 'two_proportions_z' | 'chi_square'> | null;
  const interval = (side: Side) =>
    dataType === 'boolean' ? proportionInterval(Math.round(side.mean * side.n), side.n) : meanInterval(side.n, side.mean, side.variance);
  // Each test is of the subject against the baseline: welchTest(a, b) tests mean(b) − mean(a).
  if (dataType === 'numeric') test = welchTest(baseline, subject);
  else if (dataType === 'boolean')
    test = twoProportionsTest(
      { successes: Math.round(baseline.mean * baseline.n), n: baseline.n },
      { successes: Math.round(subject.mean * subject.n), n: subject.n },
    );
  else test = chiSquareTest(baseline.distribution, subject.distribution);
  const group = (side: Side) => ({
    n: side.n,
    mean: side.n > 0 ? side.mean : null,
    ci95: side.n > 0 && dataType !== 'categorical' ? interval(side) : null,
    ...(dataType === 'categorical' && { distribution: side.distribution }),
  });
  const difference = subject.n > 0 && baseline.n > 0 ? subject.mean - baseline.mean : null;
  return {
    name,
    dataType,
    higherIsBetter,
    subject: group(subject),
    baseline: group(baseline),
    difference,
    test: test?.test ?? null,
    statistic: test?.statistic ?? null,
    df: test?.df ?? null,
    pValue: test?.pValue ?? null,
    verdict: verdictOf(test, difference ?? 0, higherIsBetter),
  };
}

/** The prompt comparisons (contract/prompt-scores.ts), handed to the prompt routes by the app. */
export function promptScoresOf(clickhouse: ClickHouseClient, sql: Sql): PromptScores {
  return {
    async compare(workspaceId, subjectRef, baselineRef, w) {
      // Both sides in one statement: the summary and the prompts' spans are read once.
      const rows = await selectPromptScoreFigures(clickhouse, {
        workspaceId,
        versions: [
          { name: subjectRef.name, version: subjectRef.version },
          { name: baselineRef.name, version: baselineRef.version },
        ],
        ...window(w),
      });
      const of = (ref: PromptVersionRef) => sidesOf(rows.filter((r) => r.prompt_name === ref.name && r.version === ref.version));
      const subject = of(subjectRef);
      const baseline = of(baselineRef);
      const names = [...new Set([...subject.keys(), ...baseline.keys()])].sort();
      const configs = await selectScoreConfigsByName(sql, workspaceId, names);
      return names.map((name) => {
        const s = subject.get(name);
        const b = baseline.get(name);
        const dataType = (s ?? b)!.dataType;
        return compareSides(name, s ?? emptySide(dataType), b ?? emptySide(dataType), configs.get(name)?.higherIsBetter ?? true);
      });
    },
    async averagesByVersion(workspaceId, promptName, w) {
      const rows = await selectPromptScoreFigures(clickhouse, { workspaceId, promptName, ...window(w) });
      const byVersion = new Map<string, FigureRow[]>();
      for (const row of rows) byVersion.set(row.version, [...(byVersion.get(row.version) ?? []), row]);
      const out = new Map<string, ScoreAverages>();
      for (const [version, versionRows] of byVersion) {
        out.set(version, Object.fromEntries([...sidesOf(versionRows)].map(([name, side]) => [name, { n: side.n, mean: side.mean }])));
      }
      return out;
    },
  };
}
