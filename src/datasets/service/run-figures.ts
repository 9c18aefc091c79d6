import type { Sql } from '../../stores/postgres.js';
import type { RunScores } from '../../contract/run-scores.js';
import type { TraceFiguresReader } from '../../contract/trace-figures.js';
import { validationError } from '../../http/errors.js';
import type { RunItem } from '../api/run-schemas.js';
import { decodeItemCursor, encodeItemCursor } from '../model/item-cursor.js';
import { compareMetric, itemFiguresOf, metricsOf, runFiguresOf } from '../model/run-figures.js';
import { selectAllRunItems } from '../tables/runs-table.js';
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

async function itemsWithFigures(readers: RunReaders, workspaceId: string, items: RunItem[]) {
  const traceIds = [...new Set(items.map((i) => i.traceId))];
  const [traces, scores] = await Promise.all([readers.traces(workspaceId, traceIds), readers.scores.valuesOfTraces(workspaceId, traceIds)]);
  return items.map((item) => itemFiguresOf(item, traces.get(item.traceId), scores.get(item.traceId)));
}

const wire = <T extends { scoreTypes: unknown; categories: unknown }>({ scoreTypes: _types, categories: _categories, ...item }: T) => item;

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
  const items = await itemsWithFigures(readers, workspaceId, await selectAllRunItems(sql, runId));
  const { page, meta } = pageOf(items, (i) => i.datasetItemId, query);
  return { data: { ...run, figures: runFiguresOf(items), items: page.map(wire) }, meta };
}

/**
 * Runs of a dataset side by side: per metric, each run after the first against the first over
 * the items present in both (paired tests), and a page of the items any of them has, each
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
  const first = runIds.findIndex((id, index) => runIds.indexOf(id) !== index);
  if (first !== -1)
    throw validationError(`Invalid request: query.runs: names the run ${runIds[first]} twice`, [
      { path: 'query.runs', message: `names the run ${runIds[first]} twice` },
    ]);
  const runs = await Promise.all(runIds.map((runId) => getRun(sql, workspaceId, datasetId, runId)));
  const perRun = await Promise.all(
    runIds.map(async (runId) => itemsWithFigures(readers, workspaceId, await selectAllRunItems(sql, runId))),
  );
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
  const items = page.map((datasetItemId) => ({
    datasetItemId,
    runs: byId.map((items) => {
      const item = items.get(datasetItemId);
      return item ? wire(item) : null;
    }),
  }));
  return { data: { runs, metrics, items }, meta };
}
