import type { Sql } from '../../stores/postgres.js';
import type { RunScores } from '../../contract/run-scores.js';
import type { TraceFiguresReader } from '../../contract/trace-figures.js';
import { validationError } from '../../http/errors.js';
import { decodeItemCursor, encodeItemCursor } from '../model/item-cursor.js';
import { compareMetric, itemFiguresOf, metricsOf, runFiguresOf } from '../model/run-figures.js';
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

function afterIdOf(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const afterId = decodeItemCursor(cursor);
  if (afterId === undefined)
    throw validationError('Invalid request: query.cursor: is not a cursor of this list', [
      { path: 'query.cursor', message: 'is not a cursor of this list' },
    ]);
  return afterId;
}

/** One page (by id after the cursor's, ids in code unit order) with its pagination. */
function pageOf<T>(all: T[], idOf: (t: T) => string, query: PageQuery) {
  const afterId = afterIdOf(query.cursor);
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
  afterIdOf(query.cursor);
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
 * Runs of a dataset side by side: per metric, each run after the first against the first
 * over the items present in both (paired tests), and a page of the items any of them has, each
 * with every run's figures (null where a run has none).
 */
export async function compareRuns(
  sql: Sql,
  readers: RunReaders,
  workspaceId: string,
  datasetId: string,
  runIds: string[],
  query: PageQuery,
) {
  afterIdOf(query.cursor);
  const runs = await comparedRuns(sql, workspaceId, datasetId, runIds);
  const perRun = await itemsWithFigures(readers, workspaceId, await Promise.all(runIds.map((runId) => selectAllRunItemFacts(sql, runId))));
  const byId = perRun.map((items) => new Map(items.map((i) => [i.datasetItemId, i])));
  const specs = metricsOf(
    perRun,
    await readers.scores.higherIsBetter(workspaceId, [...new Set(perRun.flat().flatMap((i) => Object.keys(i.scores)))]),
  );
  const metrics = runIds
    .slice(1)
    .flatMap((runId, index) =>
      specs.map((spec) => compareMetric(spec, { runId: runIds[0]!, items: byId[0]! }, { runId, items: byId[index + 1]! })),
    );
  const ids = [...new Set(perRun.flat().map((i) => i.datasetItemId))];
  const { page, meta } = pageOf(ids, (id) => id, query);
  return { data: { runs, metrics, items: await sideBySide(sql, runIds, page, byId) }, meta };
}

/**
 * The side by side view's page alone (no metrics): the page's dataset item ids first, then only
 * those items of each run, their traces' figures and scores, and their outputs; the same items
 * and order as `compareRuns` answers.
 */
export async function compareRunItems(
  sql: Sql,
  readers: RunReaders,
  workspaceId: string,
  datasetId: string,
  runIds: string[],
  query: PageQuery,
) {
  const afterId = afterIdOf(query.cursor);
  const runs = await comparedRuns(sql, workspaceId, datasetId, runIds);
  const found = await selectComparedItemIds(sql, runIds, query.limit, afterId);
  const hasMore = found.length > query.limit;
  const ids = found.slice(0, query.limit);
  const facts = await selectRunItemFactsOf(sql, runIds, ids);
  const perRun = await itemsWithFigures(
    readers,
    workspaceId,
    runIds.map((runId) => facts.filter((f) => f.runId === runId)),
  );
  const byId = perRun.map((items) => new Map(items.map((item) => [item.datasetItemId, item])));
  return {
    data: { runs, items: await sideBySide(sql, runIds, ids, byId) },
    meta: { pagination: { limit: query.limit, hasMore, nextCursor: hasMore ? encodeItemCursor(ids.at(-1)!) : null } },
  };
}
