import type { Sql } from '../../stores/postgres.js';
import type { RunScores } from '../../contract/run-scores.js';
import type { TraceFiguresReader } from '../../contract/trace-figures.js';
import { validationError } from '../../http/wire/errors.js';
import { afterIdOfCursor, encodeItemCursor } from '../model/item-cursor.js';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { RunComparisonMetric } from '../api/run-figure-schemas.js';
import {
  compareMetric,
  compareMetricOfSums,
  itemFiguresOf,
  metricsOf,
  runFiguresOf,
  scoreNames,
  type PairSums,
} from '../model/run-figures.js';
import { selectRunPairSums, type RunPairSums } from '../tables/run-items-engine-table.js';
import { hasPendingEntries } from '../tables/run-items-outbox-table.js';
import type { RunItemsMirror } from './run-items-mirror.js';
import {
  selectAllRunItemFacts,
  selectComparedItemIds,
  selectRunItemFactsOf,
  selectRunItemOutputs,
  type RunItemFacts,
} from '../tables/runs-table.js';
import { getRun } from './runs.js';

/** What a run's figures read of the other features, through src/contract/ (wired in src/app.ts). */
export interface RunReaders {
  traces: TraceFiguresReader;
  scores: RunScores;
}

interface PageQuery {
  limit: number;
  cursor?: string | undefined;
}

/** One page (by id after the cursor's, ids in code unit order) with its pagination. */
function pageOf<T>(all: T[], idOf: (t: T) => string, query: PageQuery) {
  const afterId = afterIdOfCursor(query.cursor);
  const sorted = [...all].sort((a, b) => (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0));
  const rest = afterId === undefined ? sorted : sorted.filter((t) => idOf(t) > afterId);
  const page = rest.slice(0, query.limit);
  const hasMore = rest.length > query.limit;
  return {
    page,
    meta: { pagination: { limit: query.limit, hasMore, nextCursor: hasMore ? encodeItemCursor(idOf(page.at(-1)!)) : null } },
  };
}

/**
 * Each run's items with their traces' figures and scores, read for all the runs at once: one
 * read of trace figures and one of scores whatever the number of runs (each is a scan of the
 * workspace's rows, whose cost is the same for 10,000 traces as for 20,000).
 */
async function itemsWithFigures(readers: RunReaders, workspaceId: string, runs: RunItemFacts[][]) {
  const traceIds = [...new Set(runs.flatMap((items) => items.map((i) => i.traceId)))];
  const [traces, scores] = await Promise.all([readers.traces(workspaceId, traceIds), readers.scores.valuesOfTraces(workspaceId, traceIds)]);
  return runs.map((items) => items.map((item) => itemFiguresOf(item, traces.get(item.traceId), scores.get(item.traceId))));
}

type ItemFigures = ReturnType<typeof itemFiguresOf>;

/** An item's figures as answered: with its output (read for the page), without what only the tests use. */
const wire = ({ scoreTypes: _types, categories: _categories, ...item }: ItemFigures, outputs: Map<string, unknown>, runId: string) => ({
  ...item,
  output: outputs.get(`${runId} ${item.datasetItemId}`) ?? null,
});

/** A run with its figures over all its items, and a page of its items with their output, scores, cost and latency. */
export async function getRunWithFigures(
  sql: Sql,
  readers: RunReaders,
  workspaceId: string,
  datasetId: string,
  runId: string,
  query: PageQuery,
) {
  afterIdOfCursor(query.cursor);
  const run = await getRun(sql, workspaceId, datasetId, runId);
  const [items] = (await itemsWithFigures(readers, workspaceId, [await selectAllRunItemFacts(sql, runId)])) as [ItemFigures[]];
  const { page, meta } = pageOf(items, (i) => i.datasetItemId, query);
  const outputs = await selectRunItemOutputs(
    sql,
    [runId],
    page.map((i) => i.datasetItemId),
  );
  return { data: { ...run, figures: runFiguresOf(items), items: page.map((item) => wire(item, outputs, runId)) }, meta };
}

/** The runs named, each once, of the dataset of the caller's workspace (404 otherwise). */
async function comparedRuns(sql: Sql, workspaceId: string, datasetId: string, runIds: string[]) {
  const first = runIds.findIndex((id, index) => runIds.indexOf(id) !== index);
  if (first !== -1)
    throw validationError(`Invalid request: query.runs: names the run ${runIds[first]} twice`, [
      { path: 'query.runs', message: `names the run ${runIds[first]} twice` },
    ]);
  return Promise.all(runIds.map((runId) => getRun(sql, workspaceId, datasetId, runId)));
}

/** A page of items side by side: per dataset item id, each run's item with its figures and output (null where a run has none). */
async function sideBySide(sql: Sql, runIds: string[], ids: string[], byId: Map<string, ItemFigures>[]) {
  const outputs = await selectRunItemOutputs(sql, runIds, ids);
  return ids.map((datasetItemId) => ({
    datasetItemId,
    runs: byId.map((items, r) => {
      const item = items.get(datasetItemId);
      return item ? wire(item, outputs, runIds[r]!) : null;
    }),
  }));
}

/**
 * The engine's copy of the run items and what keeps it current: the comparison sums the pairs
 * there (docs/decisions/106-run-items-for-sql.md).
 */
export interface ComparisonEngine {
  clickhouse: ClickHouseClient;
  mirror: RunItemsMirror;
}

/** Each run after the first against the first on every metric, from every item's figures read here (the direct computation). */
export async function metricsOfItems(sql: Sql, readers: RunReaders, workspaceId: string, runIds: string[]): Promise<RunComparisonMetric[]> {
  const perRun = await itemsWithFigures(readers, workspaceId, await Promise.all(runIds.map((runId) => selectAllRunItemFacts(sql, runId))));
  const byId = perRun.map((items) => new Map(items.map((i) => [i.datasetItemId, i])));
  const names = scoreNames(perRun.flat());
  const specs = metricsOf(names, await readers.scores.higherIsBetter(workspaceId, [...names.keys()]));
  return runIds
    .slice(1)
    .flatMap((runId, index) =>
      specs.map((spec) => compareMetric(spec, { runId: runIds[0]!, items: byId[0]! }, { runId, items: byId[index + 1]! })),
    );
}

/**
 * The same metrics from the engine's sums of each metric's pairs, or null when the engine's copy
 * may lag for these runs: the workspace's pending run item changes are sent first, and a change
 * still pending after that (the engine's write failed, or another request is sending it) leaves
 * the answer to the direct computation.
 */
export async function metricsInEngine(
  sql: Sql,
  engine: ComparisonEngine,
  readers: RunReaders,
  workspaceId: string,
  runIds: string[],
): Promise<RunComparisonMetric[] | null> {
  try {
    await engine.mirror.flush(workspaceId);
  } catch {
    return null;
  }
  if (await hasPendingEntries(sql, workspaceId, runIds)) return null;
  const sumRows = await selectRunPairSums(engine.clickhouse, { workspaceId, baselineRunId: runIds[0]!, runIds });
  const names = scoreNames(sumRows.filter((row) => row.kind === 'score').map((row) => ({ scoreTypes: { [row.name]: row.type } })));
  const specs = metricsOf(names, await readers.scores.higherIsBetter(workspaceId, [...names.keys()]));
  const sums = new Map(sumRows.map((row) => [`${row.run_id} ${row.kind} ${row.name}`, pairSumsOf(row)]));
  return runIds
    .slice(1)
    .flatMap((runId) => specs.map((spec) => compareMetricOfSums(spec, runIds[0]!, runId, sums.get(`${runId} ${spec.kind} ${spec.name}`))));
}

const pairSumsOf = (row: RunPairSums): PairSums => ({
  n: row.n,
  baselineMean: row.baseline_mean,
  mean: row.mean,
  differenceMean: row.difference_mean,
  differenceVariance: row.difference_variance,
  baselineTrue: row.baseline_true,
  subjectTrue: row.subject_true,
  baselineOnly: row.baseline_only,
  subjectOnly: row.subject_only,
  transitions: row.transitions.map(([baseline, subject, n]) => ({ baseline, subject, n })),
});

/** Runs of a dataset compared (the first is the baseline) and the page of their items asked for. */
export interface ComparedRuns {
  workspaceId: string;
  datasetId: string;
  runIds: string[];
  query: PageQuery;
}

/**
 * Runs of a dataset side by side: per metric, each run after the first against the first
 * over the items present in both (paired tests; summed in the engine when it is given and
 * current, else computed here over every item), and a page of the items any of them has,
 * each with every run's figures (null where a run has none).
 */
export async function compareRuns(sql: Sql, readers: RunReaders, compared: ComparedRuns, engine?: ComparisonEngine) {
  const { workspaceId, runIds } = compared;
  const { data, meta } = await compareRunItems(sql, readers, compared);
  const metrics =
    (engine && (await metricsInEngine(sql, engine, readers, workspaceId, runIds))) ??
    (await metricsOfItems(sql, readers, workspaceId, runIds));
  return { data: { runs: data.runs, metrics, items: data.items }, meta };
}

/**
 * A page of the side by side view: the page's dataset item ids first (those any of the runs
 * has, in code unit order), then only those items of each run, their traces' figures and
 * scores, and their outputs.
 */
async function sideBySidePage(sql: Sql, readers: RunReaders, workspaceId: string, runIds: string[], limit: number, afterId?: string) {
  const found = await selectComparedItemIds(sql, runIds, limit, afterId);
  const hasMore = found.length > limit;
  const ids = found.slice(0, limit);
  const facts = await selectRunItemFactsOf(sql, runIds, ids);
  const perRun = await itemsWithFigures(
    readers,
    workspaceId,
    runIds.map((runId) => facts.filter((f) => f.runId === runId)),
  );
  const byId = perRun.map((items) => new Map(items.map((item) => [item.datasetItemId, item])));
  return {
    items: await sideBySide(sql, runIds, ids, byId),
    meta: { pagination: { limit, hasMore, nextCursor: hasMore ? encodeItemCursor(ids.at(-1)!) : null } },
  };
}

/** The side by side view's page alone (no metrics): the same items and order as `compareRuns` answers. */
export async function compareRunItems(sql: Sql, readers: RunReaders, { workspaceId, datasetId, runIds, query }: ComparedRuns) {
  const afterId = afterIdOfCursor(query.cursor);
  const runs = await comparedRuns(sql, workspaceId, datasetId, runIds);
  const { items, meta } = await sideBySidePage(sql, readers, workspaceId, runIds, query.limit, afterId);
  return { data: { runs, items }, meta };
}
