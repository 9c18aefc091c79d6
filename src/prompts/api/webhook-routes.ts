import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import type { TargetGuard } from '../../egress/target-guard.js';
import { recordErrors, recordRoutes } from '../../http/routes/crud-routes.js';
import { envelope, sendData } from '../../http/wire/envelope.js';
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

const tags = ['webhooks'];
const pageMeta = { limit: z.number().int(), offset: z.number().int(), total: z.number().int() };

/** Webhook endpoints of the caller's workspace, and their deliveries. */
export const webhookRoutes: FastifyPluginAsyncZod<{ sql: Sql; guard: TargetGuard }> = async (app, { sql, guard }) => {
  recordRoutes(app, {
    tags,
    record: webhookSchema,
    params: webhookIdParams,
    create: {
      summary: 'Register an endpoint for prompt events; the secret is answered once',
      body: createWebhookBody,
      answer: createdWebhookSchema,
      run: (workspaceId, body) => store.createWebhook(sql, workspaceId, body, guard),
    },
    list: { summary: 'The endpoints of the workspace', run: (workspaceId) => store.listWebhooks(sql, workspaceId) },
    get: { summary: 'One endpoint', run: (workspaceId, id) => store.getWebhook(sql, workspaceId, id) },
    remove: {
      summary: 'Remove an endpoint and its deliveries',
      answer: deletedWebhookSchema,
      run: (workspaceId, id) => store.deleteWebhook(sql, workspaceId, id),
    },
  });

  app.get('/:id/deliveries', {
    schema: {
      tags,
      summary: 'Deliveries of an endpoint, newest first: status, attempts, last answer, next attempt',
      params: webhookIdParams,
      querystring: deliveriesQuery,
      response: { 200: envelope(z.array(deliverySchema), pageMeta), ...recordErrors },
    },
    handler: async (request, reply) => {
      const { deliveries, total } = await store.listDeliveries(sql, request.auth.workspaceId, request.params.id, request.query);
      return sendData(request, reply, deliveries, { meta: { limit: request.query.limit, offset: request.query.offset, total } });
    },
  });
};
