import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import type { SpanContentReader } from '../../contract/span-content.js';
import { recordRoute, recordRoutes } from '../../http/routes/crud-routes.js';
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

  recordRoute(app, tags, {
    method: 'POST',
    url: '/:id/items',
    summary: 'Upsert one item or up to 1,000 (`{items: [...]}`); answered per item, a re-sent id is a new version of its item',
    params: datasetParams,
    body: upsertItemsBody,
    answer: upsertItemsResultSchema,
    run: (workspaceId, { params, body }) =>
      items.upsertItems(sql, workspaceId, params.id, 'items' in body && Array.isArray(body.items) ? body.items : [body]),
  });

  recordRoute(app, tags, {
    method: 'POST',
    url: '/:id/items/from-span',
    readBarrier: 'workspace',
    summary: "Add a stored span to the dataset: its input the item's input, its output the expected output",
    params: datasetParams,
    body: itemFromSpanBody,
    answer: itemSchema,
    status: 201,
    run: (workspaceId, { params, body }) => items.addItemFromSpan(sql, spans, workspaceId, params.id, body),
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/items',
    summary: "A page of the dataset's items by id, as they are now or as they were at `asOf` (active ones unless `status` says)",
    params: datasetParams,
    query: listItemsQuery,
    answer: z.array(itemSchema),
    meta: itemPageMetaSchema,
    run: async (workspaceId, { params, query }) => {
      const page = await items.listItems(sql, workspaceId, params.id, query);
      return { data: page.items, meta: page.meta };
    },
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/items/:itemId',
    summary: 'One item, as it is now or as it was at `asOf`',
    params: itemParams,
    query: itemAsOfQuery,
    answer: itemSchema,
    run: (workspaceId, { params, query }) => items.getItem(sql, workspaceId, params.id, params.itemId, query.asOf),
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/items/:itemId/versions',
    summary: 'Every version of an item, oldest first',
    params: itemParams,
    answer: z.array(itemSchema),
    run: (workspaceId, { params }) => items.getItemHistory(sql, workspaceId, params.id, params.itemId),
  });

  for (const [action, status, summary] of [
    ['archive', 'archived', 'Archive an item: a new version, so runs and `asOf` reads of earlier times still see it'],
    ['unarchive', 'active', 'Make an archived item active again (a new version)'],
  ] as const) {
    recordRoute(app, tags, {
      method: 'POST',
      url: `/:id/items/:itemId/${action}`,
      summary,
      params: itemParams,
      answer: itemSchema,
      run: (workspaceId, { params }) => items.setItemStatus(sql, workspaceId, params.id, params.itemId, status),
    });
  }
};
