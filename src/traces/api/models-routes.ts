import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Config } from '../../config.js';
import type { Sql } from '../../stores/postgres.js';
import { queryLimitsOf } from '../model/query-limits.js';
import { envelope, sendData } from '../../http/wire/envelope.js';
import { clientErrorsOrNotFound } from './route-errors.js';
import * as prices from '../query/prices.js';
import {
  createPriceBody,
  priceIdParams,
  priceLookupQuery,
  priceLookupSchema,
  rangeQuery,
  repriceBody,
  repriceResultSchema,
  unpricedListSchema,
  workspacePriceSchema,
} from '../model/wire/cost-schemas.js';
import type { PriceBook } from '../cost/workspace-prices.js';

const errors = clientErrorsOrNotFound;
const tags = ['models'];

/** Model prices of the caller's workspace, the lookup, the unpriced list and repricing. */
export const modelRoutes: FastifyPluginAsyncZod<{ sql: Sql; clickhouse: ClickHouseClient; book: PriceBook; config: Config }> = async (
  app,
  { sql, clickhouse, book, config },
) => {
  const limits = queryLimitsOf(config);
  app.post('/', {
    schema: {
      tags,
      summary: 'Set a model price for this workspace (priority over the built-in table)',
      body: createPriceBody,
      response: { 201: envelope(workspacePriceSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await prices.createPrice(sql, book, request.auth.workspaceId, request.body), { status: 201 }),
  });

  app.get('/', {
    schema: {
      tags,
      summary: "This workspace's model prices, oldest first",
      response: { 200: envelope(z.array(workspacePriceSchema)), ...errors },
    },
    handler: async (request, reply) => sendData(request, reply, await prices.listPrices(sql, request.auth.workspaceId)),
  });

  app.get('/price', {
    schema: {
      tags,
      summary: 'The price a generation span of this model (and provider) would get now, and where it comes from',
      querystring: priceLookupQuery,
      response: { 200: envelope(priceLookupSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await prices.lookupPrice(book, request.auth.workspaceId, request.query.model, request.query.provider)),
  });

  app.get('/unpriced', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary: 'Models seen with token counts but no price in the range (default: the last 30 days), most used first',
      querystring: rangeQuery,
      response: { 200: envelope(unpricedListSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await prices.listUnpriced(clickhouse, request.auth.workspaceId, request.query, limits)),
  });

  app.post('/reprice', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary: 'Price again, with the prices of now, the spans of a range whose cost was not sent; summaries follow',
      body: repriceBody,
      response: { 200: envelope(repriceResultSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await prices.reprice(clickhouse, book, request.auth.workspaceId, request.body)),
  });

  app.delete('/:id', {
    schema: {
      tags,
      summary: 'Delete a model price of this workspace',
      params: priceIdParams,
      response: { 200: envelope(z.object({ id: z.string(), deleted: z.literal(true) })), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await prices.deletePrice(sql, book, request.auth.workspaceId, request.params.id)),
  });
};
