import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import { deletedSchema, recordRoute } from '../../http/routes/crud-routes.js';
import * as runs from '../service/runs.js';
import { flushMirror, type RunItemsMirror } from '../service/run-items-mirror.js';
import { compareRunItems, compareRuns, getRunWithFigures, type RunReaders } from '../service/run-figures.js';
import {
  compareRunsQuery,
  runComparisonItemsSchema,
  runComparisonSchema,
  runFiguresQuery,
  runWithFiguresSchema,
} from './run-figure-schemas.js';
import { datasetParams } from './schemas.js';
import {
  createRunBody,
  listRunItemsQuery,
  runItemPageMetaSchema,
  runItemSchema,
  runParams,
  runSchema,
  updateRunBody,
  upsertRunItemsBody,
  upsertRunItemsResultSchema,
} from './run-schemas.js';

const tags = ['datasets'];

/** The runs (experiments) of a dataset of the caller's workspace, under `/api/datasets/:id/runs`. */
export const datasetRunRoutes: FastifyPluginAsyncZod<{
  sql: Sql;
  readers: RunReaders;
  mirror: RunItemsMirror;
  clickhouse: ClickHouseClient;
}> = async (app, { sql, readers, mirror, clickhouse }) => {
  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/runs/compare',
    readBarrier: 'workspace',
    summary:
      'Runs side by side: per metric each run against the first over the items both have (paired t, McNemar) with a verdict, and a page of items',
    params: datasetParams,
    query: compareRunsQuery,
    answer: runComparisonSchema,
    meta: runItemPageMetaSchema,
    run: (workspaceId, { params, query: { runs: runIds, ...page } }) =>
      compareRuns(sql, readers, { workspaceId, datasetId: params.id, runIds, query: page }, { clickhouse, mirror }),
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/runs/compare/items',
    readBarrier: 'workspace',
    summary:
      'The items of runs side by side, a page at a time, without the metrics: the same items as /runs/compare answers, read for the page alone',
    params: datasetParams,
    query: compareRunsQuery,
    answer: runComparisonItemsSchema,
    meta: runItemPageMetaSchema,
    run: (workspaceId, { params, query: { runs: runIds, ...page } }) =>
      compareRunItems(sql, readers, { workspaceId, datasetId: params.id, runIds, query: page }),
  });

  recordRoute(app, tags, {
    method: 'POST',
    url: '/:id/runs',
    summary: 'Create a run (a name is unique in the dataset); it records the dataset version (a time) it uses',
    params: datasetParams,
    body: createRunBody,
    answer: runSchema,
    status: 201,
    more: [409],
    run: (workspaceId, { params, body }) => runs.createRun(sql, workspaceId, params.id, body),
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/runs',
    summary: 'The runs of a dataset, newest first',
    params: datasetParams,
    answer: z.array(runSchema),
    run: (workspaceId, { params }) => runs.listRuns(sql, workspaceId, params.id),
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/runs/:runId',
    readBarrier: 'workspace',
    summary: 'One run with its figures (per score mean and 95% interval, cost, latency p50/p95, errors) and a page of its items',
    params: runParams,
    query: runFiguresQuery,
    answer: runWithFiguresSchema,
    meta: runItemPageMetaSchema,
    run: (workspaceId, { params, query }) => getRunWithFigures(sql, readers, workspaceId, params.id, params.runId, query),
  });

  recordRoute(app, tags, {
    method: 'PATCH',
    url: '/:id/runs/:runId',
    summary: "Change a run's description or metadata",
    params: runParams,
    body: updateRunBody,
    answer: runSchema,
    run: (workspaceId, { params, body }) => runs.updateRun(sql, workspaceId, params.id, params.runId, body),
  });

  recordRoute(app, tags, {
    method: 'DELETE',
    url: '/:id/runs/:runId',
    summary: 'Delete a run and its items (their traces and scores stay)',
    params: runParams,
    answer: deletedSchema,
    run: async (workspaceId, { params }, request) => {
      const deleted = await runs.deleteRun(sql, workspaceId, params.id, params.runId);
      await flushMirror(mirror, request);
      return deleted;
    },
  });

  recordRoute(app, tags, {
    method: 'POST',
    url: '/:id/runs/:runId/items',
    summary: 'Record run items (up to 1,000): per dataset item its trace, output or error; answered per item',
    params: runParams,
    body: upsertRunItemsBody,
    answer: upsertRunItemsResultSchema,
    run: async (workspaceId, { params, body }, request) => {
      const sent = 'items' in body && Array.isArray(body.items) ? body.items : [body];
      const result = await runs.upsertRunItems(sql, workspaceId, params.id, params.runId, sent);
      if (result.accepted > 0) await flushMirror(mirror, request);
      return result;
    },
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/runs/:runId/items',
    summary: "A page of a run's items by dataset item id",
    params: runParams,
    query: listRunItemsQuery,
    answer: z.array(runItemSchema),
    meta: runItemPageMetaSchema,
    run: async (workspaceId, { params, query }) => {
      const page = await runs.listRunItems(sql, workspaceId, params.id, params.runId, query);
      return { data: page.items, meta: page.meta };
    },
  });
};
