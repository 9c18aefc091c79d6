import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import type { TargetGuard } from '../../egress/target-guard.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import {
  createWebhookBody,
  createdWebhookSchema,
  deletedWebhookSchema,
  deliveriesQuery,
  deliverySchema,
  webhookIdParams,
  webhookSchema,
} from '../model/webhook-schemas.js';
import * as store from '../service/webhooks.js';

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const tags = ['webhooks'];
const pageMeta = { limit: z.number().int(), offset: z.number().int(), total: z.number().int() };

/** Webhook endpoints of the caller's workspace, and their deliveries. */
export const webhookRoutes: FastifyPluginAsyncZod<{ sql: Sql; guard: TargetGuard }> = async (app, { sql, guard }) => {
  app.post('/', {
    schema: {
      tags,
      summary: 'Register an endpoint for prompt events; the secret is answered once',
      body: createWebhookBody,
      response: { 201: envelope(createdWebhookSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await store.createWebhook(sql, request.auth.workspaceId, request.body, guard), { status: 201 }),
  });

  app.get('/', {
    schema: { tags, summary: 'The endpoints of the workspace', response: { 200: envelope(z.array(webhookSchema)), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await store.listWebhooks(sql, request.auth.workspaceId)),
  });

  app.get('/:id', {
    schema: { tags, summary: 'One endpoint', params: webhookIdParams, response: { 200: envelope(webhookSchema), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await store.getWebhook(sql, request.auth.workspaceId, request.params.id)),
  });

  app.delete('/:id', {
    schema: {
      tags,
      summary: 'Remove an endpoint and its deliveries',
      params: webhookIdParams,
      response: { 200: envelope(deletedWebhookSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await store.deleteWebhook(sql, request.auth.workspaceId, request.params.id)),
  });

  app.get('/:id/deliveries', {
    schema: {
      tags,
      summary: 'Deliveries of an endpoint, newest first: status, attempts, last answer, next attempt',
      params: webhookIdParams,
      querystring: deliveriesQuery,
      response: { 200: envelope(z.array(deliverySchema), pageMeta), ...errors },
    },
    handler: async (request, reply) => {
      const { deliveries, total } = await store.listDeliveries(sql, request.auth.workspaceId, request.params.id, request.query);
      return sendData(request, reply, deliveries, { meta: { limit: request.query.limit, offset: request.query.offset, total } });
    },
  });
};
