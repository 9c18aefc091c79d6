import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import type { SpanContentReader } from '../../contract/span-content.js';
import { recordErrors, recordRoutes } from '../../http/routes/crud-routes.js';
import { envelope, sendData } from '../../http/wire/envelope.js';
import * as datasets from '../service/datasets.js';
import * as items from '../service/items.js';
import { flushMirror, type RunItemsMirror } from '../service/run-items-mirror.js';
import {
  createDatasetBody,
  datasetParams,
  datasetSchema,
  itemAsOfQuery,
  itemFromSpanBody,
  itemPageMetaSchema,
  itemParams,
  itemSchema,
  listItemsQuery,
  updateDatasetBody,
  upsertItemsBody,
  upsertItemsResultSchema,
} from './schemas.js';

const errors = recordErrors;
const tags = ['datasets'];

/** The datasets of the caller's workspace and their items (versioned by time). */
export const datasetRoutes: FastifyPluginAsyncZod<{ sql: Sql; spans: SpanContentReader; mirror: RunItemsMirror }> = async (
  app,
  { sql, spans, mirror },
) => {
  recordRoutes(app, {
    tags,
    record: datasetSchema,
    params: datasetParams,
    create: {
      summary: 'Create a dataset (a name is unique in the workspace), with optional JSON Schemas for item input and expected output',
      body: createDatasetBody,
      more: [409],
      run: (workspaceId, body) => datasets.createDataset(sql, workspaceId, body),
    },
    list: { summary: 'The datasets of the workspace, by name', run: (workspaceId) => datasets.listDatasets(sql, workspaceId) },
    get: { summary: 'One dataset', run: (workspaceId, id) => datasets.getDataset(sql, workspaceId, id) },
    update: {
      method: 'PATCH',
      summary: "Change a dataset's name, description, metadata or schemas (new schemas check the items written from then on)",
      body: updateDatasetBody,
      more: [409],
      run: (workspaceId, id, body) => datasets.updateDataset(sql, workspaceId, id, body),
    },
    remove: {
      summary: 'Delete a dataset with its items and runs (their traces and scores stay)',
      run: async (workspaceId, id, request) => {
        const deleted = await datasets.deleteDataset(sql, workspaceId, id);
        await flushMirror(mirror, request);
        return deleted;
      },
    },
  });

  app.post('/:id/items', {
    schema: {
      tags,
      summary: 'Upsert one item or up to 1,000 (`{items: [...]}`); answered per item, a re-sent id is a new version of its item',
      params: datasetParams,
      body: upsertItemsBody,
      response: { 200: envelope(upsertItemsResultSchema), ...errors },
    },
    handler: async (request, reply) => {
      const body = request.body;
      const sent = 'items' in body && Array.isArray(body.items) ? body.items : [body];
      return sendData(request, reply, await items.upsertItems(sql, request.auth.workspaceId, request.params.id, sent));
    },
  });

  app.post('/:id/items/from-span', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary: "Add a stored span to the dataset: its input the item's input, its output the expected output",
      params: datasetParams,
      body: itemFromSpanBody,
      response: { 201: envelope(itemSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await items.addItemFromSpan(sql, spans, request.auth.workspaceId, request.params.id, request.body), {
        status: 201,
      }),
  });

  app.get('/:id/items', {
    schema: {
      tags,
      summary: "A page of the dataset's items by id, as they are now or as they were at `asOf` (active ones unless `status` says)",
      params: datasetParams,
      querystring: listItemsQuery,
      response: { 200: envelope(z.array(itemSchema), itemPageMetaSchema), ...errors },
    },
    handler: async (request, reply) => {
      const page = await items.listItems(sql, request.auth.workspaceId, request.params.id, request.query);
      return sendData(request, reply, page.items, { meta: page.meta });
    },
  });

  app.get('/:id/items/:itemId', {
    schema: {
      tags,
      summary: 'One item, as it is now or as it was at `asOf`',
      params: itemParams,
      querystring: itemAsOfQuery,
      response: { 200: envelope(itemSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(
        request,
        reply,
        await items.getItem(sql, request.auth.workspaceId, request.params.id, request.params.itemId, request.query.asOf),
      ),
  });

  app.get('/:id/items/:itemId/versions', {
    schema: {
      tags,
      summary: 'Every version of an item, oldest first',
      params: itemParams,
      response: { 200: envelope(z.array(itemSchema)), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await items.getItemHistory(sql, request.auth.workspaceId, request.params.id, request.params.itemId)),
  });

  for (const [action, status, summary] of [
    ['archive', 'archived', 'Archive an item: a new version, so runs and `asOf` reads of earlier times still see it'],
    ['unarchive', 'active', 'Make an archived item active again (a new version)'],
  ] as const) {
    app.post(`/:id/items/:itemId/${action}`, {
      schema: { tags, summary, params: itemParams, response: { 200: envelope(itemSchema), ...errors } },
      handler: async (request, reply) =>
        sendData(
          request,
          reply,
          await items.setItemStatus(sql, request.auth.workspaceId, request.params.id, request.params.itemId, status),
        ),
    });
  }
};
