import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
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

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const tags = ['datasets'];

/** The runs (experiments) of a dataset of the caller's workspace, under `/api/datasets/:id/runs`. */
export const datasetRunRoutes: FastifyPluginAsyncZod<{
  sql: Sql;
  readers: RunReaders;
  mirror: RunItemsMirror;
  clickhouse: ClickHouseClient;
}> = async (app, { sql, readers, mirror, clickhouse }) => {
  app.get('/:id/runs/compare', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary:
        'Runs side by side: per metric each run against the first over the items both have (paired t, McNemar) with a verdict, and a page of items',
      params: datasetParams,
      querystring: compareRunsQuery,
      response: { 200: envelope(runComparisonSchema, runItemPageMetaSchema), ...errors },
    },
    handler: async (request, reply) => {
      const { runs: runIds, ...page } = request.query;
      const answer = await compareRuns(sql, readers, request.auth.workspaceId, request.params.id, runIds, page, { clickhouse, mirror });
      return sendData(request, reply, answer.data, { meta: answer.meta });
    },
  });

  app.get('/:id/runs/compare/items', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary:
        'The items of runs side by side, a page at a time, without the metrics: the same items as /runs/compare answers, read for the page alone',
      params: datasetParams,
      querystring: compareRunsQuery,
      response: { 200: envelope(runComparisonItemsSchema, runItemPageMetaSchema), ...errors },
    },
    handler: async (request, reply) => {
      const { runs: runIds, ...page } = request.query;
      const answer = await compareRunItems(sql, readers, request.auth.workspaceId, request.params.id, runIds, page);
      return sendData(request, reply, answer.data, { meta: answer.meta });
    },
  });

  app.post('/:id/runs', {
    schema: {
      tags,
      summary: 'Create a run (a name is unique in the dataset); it records the dataset version (a time) it uses',
      params: datasetParams,
      body: createRunBody,
      response: { 201: envelope(runSchema), ...errors, 409: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await runs.createRun(sql, request.auth.workspaceId, request.params.id, request.body), { status: 201 }),
  });

  app.get('/:id/runs', {
    schema: {
      tags,
      summary: 'The runs of a dataset, newest first',
      params: datasetParams,
      response: { 200: envelope(z.array(runSchema)), ...errors },
    },
    handler: async (request, reply) => sendData(request, reply, await runs.listRuns(sql, request.auth.workspaceId, request.params.id)),
  });

  app.get('/:id/runs/:runId', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary: 'One run with its figures (per score mean and 95% interval, cost, latency p50/p95, errors) and a page of its items',
      params: runParams,
      querystring: runFiguresQuery,
      response: { 200: envelope(runWithFiguresSchema, runItemPageMetaSchema), ...errors },
    },
    handler: async (request, reply) => {
      const answer = await getRunWithFigures(
        sql,
        readers,
        request.auth.workspaceId,
        request.params.id,
        request.params.runId,
        request.query,
      );
      return sendData(request, reply, answer.data, { meta: answer.meta });
    },
  });

  app.patch('/:id/runs/:runId', {
    schema: {
      tags,
      summary: "Change a run's description or metadata",
      params: runParams,
      body: updateRunBody,
      response: { 200: envelope(runSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await runs.updateRun(sql, request.auth.workspaceId, request.params.id, request.params.runId, request.body)),
  });

  app.delete('/:id/runs/:runId', {
    schema: {
      tags,
      summary: 'Delete a run and its items (their traces and scores stay)',
      params: runParams,
      response: { 200: envelope(z.object({ id: z.string(), deleted: z.literal(true) })), ...errors },
    },
    handler: async (request, reply) => {
      const deleted = await runs.deleteRun(sql, request.auth.workspaceId, request.params.id, request.params.runId);
      await flushMirror(mirror, request);
      return sendData(request, reply, deleted);
    },
  });

  app.post('/:id/runs/:runId/items', {
    schema: {
      tags,
      summary: 'Record run items (up to 1,000): per dataset item its trace, output or error; answered per item',
      params: runParams,
      body: upsertRunItemsBody,
      response: { 200: envelope(upsertRunItemsResultSchema), ...errors },
    },
    handler: async (request, reply) => {
      const body = request.body;
      const sent = 'items' in body && Array.isArray(body.items) ? body.items : [body];
      const result = await runs.upsertRunItems(sql, request.auth.workspaceId, request.params.id, request.params.runId, sent);
      if (result.accepted > 0) await flushMirror(mirror, request);
      return sendData(request, reply, result);
    },
  });

  app.get('/:id/runs/:runId/items', {
    schema: {
      tags,
      summary: "A page of a run's items by dataset item id",
      params: runParams,
      querystring: listRunItemsQuery,
      response: { 200: envelope(z.array(runItemSchema), runItemPageMetaSchema), ...errors },
    },
    handler: async (request, reply) => {
      const page = await runs.listRunItems(sql, request.auth.workspaceId, request.params.id, request.params.runId, request.query);
      return sendData(request, reply, page.items, { meta: page.meta });
    },
  });
};
