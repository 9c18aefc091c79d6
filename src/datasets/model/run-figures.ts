import type { TraceFigures } from '../../contract/trace-figures.js';
import type { TraceScoreValue } from '../../contract/run-scores.js';
import {
  figuresOf,
  mcNemarTest,
  meanInterval,
  pairedTTest,
  pairedTTestOf,
  proportionInterval,
  quantile,
  stuartMaxwellTest,
  stuartMaxwellTestOf,
  verdictOf,
  type CategoryTransition,
  type TestName,
  type TestResult,
} from '../../statistics/statistics.js';
import type { RunComparisonMetric, RunFigures, RunItemFigures } from '../api/run-figure-schemas.js';
import type { RunItem } from '../api/run-schemas.js';

/**
 * Pure rules of a run's figures and of the comparison of runs, no I/O: a run item's figures
 * are its trace's (cost, latency, failure, scores per name), a run's are over its items, and
 * two runs compare over the items present in both (paired tests).
 */

/**
 * A run item with its trace's figures and scores (per name, the mean of the trace's scores of
 * it); its output is read for the items of a page only (undefined until then).
 */
export function itemFiguresOf(
  item: Pick<RunItem, 'datasetItemId' | 'traceId' | 'spanId' | 'error'> & { output?: unknown },
  trace: TraceFigures | undefined,
  scores: Record<string, TraceScoreValue> | undefined,
): RunItemFigures & { scoreTypes: Record<string, TraceScoreValue['dataType']>; categories: Record<string, string> } {
  return {
    datasetItemId: item.datasetItemId,
    traceId: item.traceId,
    spanId: item.spanId,
    output: item.output,
    error: item.error,
    failed: item.error !== null || trace?.error === true,
    costUsd: trace?.costUsd ?? null,
    latencyMs: trace?.latencyMs ?? null,
    scores: Object.fromEntries(Object.entries(scores ?? {}).map(([name, s]) => [name, s.mean])),
    scoreTypes: Object.fromEntries(Object.entries(scores ?? {}).map(([name, s]) => [name, s.dataType])),
    categories: Object.fromEntries(Object.entries(scores ?? {}).flatMap(([name, s]) => (s.category === null ? [] : [[name, s.category]]))),
  };
}

type ItemFigures = ReturnType<typeof itemFiguresOf>;

const isNumber = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** A boolean score of an item is true when most of its trace's scores of the name are. */
const asBoolean = (mean: number) => mean >= 0.5;

/** Per score name (sorted), its data type as the items' scores say. */
export function scoreNames(items: Pick<ItemFigures, 'scoreTypes'>[]): Map<string, TraceScoreValue['dataType']> {
  const names = new Map<string, TraceScoreValue['dataType']>();
  for (const item of items) for (const [name, type] of Object.entries(item.scoreTypes)) if (!names.has(name)) names.set(name, type);
  return new Map([...names].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * A run's figures over its items: per score name the count of items scored, the mean of their
 * values and its 95% interval (Student's t; Wilson's for boolean, an item counting as true when
 * most of its scores are); total cost, latency p50/p95 of the items' traces, and the items
 * failed (an error recorded on the item or a failed trace).
 */
export function runFiguresOf(items: ItemFigures[]): RunFigures {
  const latencies = items.map((i) => i.latencyMs).filter(isNumber);
  const costs = items.map((i) => i.costUsd).filter(isNumber);
  const scores = [...scoreNames(items)].map(([name, dataType]) => {
    const values = items.map((i) => i.scores[name]).filter(isNumber);
    if (dataType === 'boolean') {
      const successes = values.filter(asBoolean).length;
      return {
        name,
        dataType,
        n: values.length,
        mean: values.length > 0 ? successes / values.length : null,
        ci95: proportionInterval(successes, values.length),
      };
    }
    const { n, mean, variance } = figuresOf(values);
    return { name, dataType, n, mean: n > 0 ? mean : null, ci95: meanInterval(n, mean, variance) };
  });
  return {
    items: items.length,
    errors: items.filter((i) => i.failed).length,
    costUsd: costs.length > 0 ? costs.reduce((s, c) => s + c, 0) : null,
    latencyP50: quantile(latencies, 0.5),
    latencyP95: quantile(latencies, 0.95),
    scores,
  };
}

interface MetricSpec {
  kind: RunComparisonMetric['kind'];
  name: string;
  dataType: RunComparisonMetric['dataType'];
  higherIsBetter: boolean;
  value: (item: ItemFigures) => number | null | undefined;
}

/**
 * The metrics runs compare on: each score name any of them has (`scoreNames`; its direction from
 * `higherIsBetter`; a categorical score has none), cost and latency (lower is better).
 */
export function metricsOf(names: Map<string, TraceScoreValue['dataType']>, higherIsBetter: Map<string, boolean>): MetricSpec[] {
  const specs: MetricSpec[] = [];
  for (const [name, dataType] of names) {
    specs.push({ kind: 'score', name, dataType, higherIsBetter: higherIsBetter.get(name) ?? true, value: (i) => i.scores[name] });
  }
  specs.push({ kind: 'cost', name: 'costUsd', dataType: 'numeric', higherIsBetter: false, value: (i) => i.costUsd });
  specs.push({ kind: 'latency', name: 'latencyMs', dataType: 'numeric', higherIsBetter: false, value: (i) => i.latencyMs });
  return specs;
}

type RunItems = { runId: string; items: Map<string, ItemFigures> };

/** A metric's pairs as the tests take them: the count, the means of each side, and the test (null without one). */
interface PairedFigures {
  n: number;
  baselineMean: number | null;
  mean: number | null;
  test: TestResult<RunComparisonMetric['test'] & TestName> | null;
}

/** The subject run against the baseline on one metric, from its paired figures, with the verdict as the prompt comparison gives it. */
function metricOf(spec: MetricSpec, baselineRunId: string, runId: string, figures: PairedFigures): RunComparisonMetric {
  const categorical = spec.dataType === 'categorical';
  const difference = !categorical && figures.baselineMean !== null && figures.mean !== null ? figures.mean - figures.baselineMean : null;
  return {
    kind: spec.kind,
    name: spec.name,
    dataType: spec.dataType,
    higherIsBetter: spec.higherIsBetter,
    baselineRunId,
    runId,
    n: figures.n,
    baselineMean: categorical ? null : figures.baselineMean,
    mean: categorical ? null : figures.mean,
    difference,
    test: figures.test?.test ?? null,
    statistic: figures.test?.statistic ?? null,
    df: figures.test?.df ?? null,
    pValue: figures.test?.pValue ?? null,
    verdict: verdictOf(figures.test, difference ?? 0, spec.higherIsBetter),
  };
}

/**
 * The subject run against the baseline on one metric, over the items present in both with a
 * value in both: the paired difference of means (subject − baseline) with the paired t test
 * (numeric), McNemar's (boolean) or Stuart–Maxwell's of marginal homogeneity (categorical: do
 * the categories' shares differ? Categories have no mean nor direction, so the verdict is
 * `different` or `no significant difference`), and the verdict as the prompt comparison gives it.
 */
export function compareMetric(spec: MetricSpec, baseline: RunItems, subject: RunItems): RunComparisonMetric {
  if (spec.dataType === 'categorical') {
    const pairs: [string, string][] = [];
    for (const [id, b] of baseline.items) {
      const bc = b.categories[spec.name];
      const sc = subject.items.get(id)?.categories[spec.name];
      if (bc !== undefined && sc !== undefined) pairs.push([bc, sc]);
    }
    return metricOf(spec, baseline.runId, subject.runId, {
      n: pairs.length,
      baselineMean: null,
      mean: null,
      test: stuartMaxwellTest(pairs),
    });
  }
  const pairs: [number, number][] = [];
  for (const [id, b] of baseline.items) {
    const s = subject.items.get(id);
    const bv = spec.value(b);
    const sv = s && spec.value(s);
    if (isNumber(bv) && isNumber(sv)) pairs.push(spec.dataType === 'boolean' ? [+asBoolean(bv), +asBoolean(sv)] : [bv, sv]);
  }
  const n = pairs.length;
  const test =
    spec.dataType === 'boolean'
      ? mcNemarTest(pairs.filter(([b, s]) => b === 1 && s === 0).length, pairs.filter(([b, s]) => b === 0 && s === 1).length)
      : pairedTTest(pairs.map(([b, s]) => s - b));
  return metricOf(spec, baseline.runId, subject.runId, {
    n,
    baselineMean: n > 0 ? figuresOf(pairs.map((p) => p[0])).mean : null,
    mean: n > 0 ? figuresOf(pairs.map((p) => p[1])).mean : null,
    test,
  });
}

/**
 * A metric's pairs summed by the engine (run-items-engine-table.ts): the count, the means of
 * each side and of the differences with the differences' sample variance, the items true on
 * each side (the mean ≥ ½), the discordant pairs, and the count of each (baseline category,
 * subject category) transition.
 */
export interface PairSums {
  n: number;
  baselineMean: number;
  mean: number;
  differenceMean: number;
  differenceVariance: number;
  baselineTrue: number;
  subjectTrue: number;
  baselineOnly: number;
  subjectOnly: number;
  transitions: CategoryTransition[];
}

/** The subject run against the baseline on one metric from the engine's sums of its pairs (none: no pair), as `compareMetric` answers it. */
export function compareMetricOfSums(
  spec: MetricSpec,
  baselineRunId: string,
  runId: string,
  sums: PairSums | undefined,
): RunComparisonMetric {
  if (spec.dataType === 'categorical') {
    const transitions = sums?.transitions ?? [];
    const n = transitions.reduce((total, t) => total + t.n, 0);
    return metricOf(spec, baselineRunId, runId, { n, baselineMean: null, mean: null, test: stuartMaxwellTestOf(transitions) });
  }
  if (!sums || sums.n === 0) {
    const test = spec.dataType === 'boolean' ? mcNemarTest(0, 0) : pairedTTestOf({ n: 0, mean: Number.NaN, variance: Number.NaN });
    return metricOf(spec, baselineRunId, runId, { n: 0, baselineMean: null, mean: null, test });
  }
  if (spec.dataType === 'boolean')
    return metricOf(spec, baselineRunId, runId, {
      n: sums.n,
      baselineMean: sums.baselineTrue / sums.n,
      mean: sums.subjectTrue / sums.n,
      test: mcNemarTest(sums.baselineOnly, sums.subjectOnly),
    });
  return metricOf(spec, baselineRunId, runId, {
    n: sums.n,
    baselineMean: sums.baselineMean,
    mean: sums.mean,
    test: pairedTTestOf({ n: sums.n, mean: sums.differenceMean, variance: sums.n > 1 ? sums.differenceVariance : Number.NaN }),
  });
}
