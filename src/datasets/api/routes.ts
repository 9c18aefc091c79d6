import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import type { SpanContentReader } from '../../contract/span-content.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
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

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const tags = ['datasets'];

/** The datasets of the caller's workspace and their items (versioned by time). */
export const datasetRoutes: FastifyPluginAsyncZod<{ sql: Sql; spans: SpanContentReader; mirror: RunItemsMirror }> = async (
  app,
  { sql, spans, mirror },
) => {
  app.post('/', {
    schema: {
      tags,
      summary: 'Create a dataset (a name is unique in the workspace), with optional JSON Schemas for item input and expected output',
      body: createDatasetBody,
      response: { 201: envelope(datasetSchema), ...errors, 409: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await datasets.createDataset(sql, request.auth.workspaceId, request.body), { status: 201 }),
  });

  app.get('/', {
    schema: { tags, summary: 'The datasets of the workspace, by name', response: { 200: envelope(z.array(datasetSchema)), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await datasets.listDatasets(sql, request.auth.workspaceId)),
  });

  app.get('/:id', {
    schema: { tags, summary: 'One dataset', params: datasetParams, response: { 200: envelope(datasetSchema), ...errors } },
    handler: async (request, reply) =>
      sendData(request, reply, await datasets.getDataset(sql, request.auth.workspaceId, request.params.id)),
  });

  app.patch('/:id', {
    schema: {
      tags,
      summary: "Change a dataset's name, description, metadata or schemas (new schemas check the items written from then on)",
      params: datasetParams,
      body: updateDatasetBody,
      response: { 200: envelope(datasetSchema), ...errors, 409: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await datasets.updateDataset(sql, request.auth.workspaceId, request.params.id, request.body)),
  });

  app.delete('/:id', {
    schema: {
      tags,
      summary: 'Delete a dataset with its items and runs (their traces and scores stay)',
      params: datasetParams,
      response: { 200: envelope(z.object({ id: z.string(), deleted: z.literal(true) })), ...errors },
    },
    handler: async (request, reply) => {
      const deleted = await datasets.deleteDataset(sql, request.auth.workspaceId, request.params.id);
      await flushMirror(mirror, request);
      return sendData(request, reply, deleted);
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

  app.post('/:id/items/:itemId/archive', {
    schema: {
      tags,
      summary: 'Archive an item: a new version, so runs and `asOf` reads of earlier times still see it',
      params: itemParams,
      response: { 200: envelope(itemSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(
        request,
        reply,
        await items.setItemStatus(sql, request.auth.workspaceId, request.params.id, request.params.itemId, 'archived'),
      ),
  });

  app.post('/:id/items/:itemId/unarchive', {
    schema: {
      tags,
      summary: 'Make an archived item active again (a new version)',
      params: itemParams,
      response: { 200: envelope(itemSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(
        request,
        reply,
        await items.setItemStatus(sql, request.auth.workspaceId, request.params.id, request.params.itemId, 'active'),
      ),
  });
};
