import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import * as monitors from '../service/monitors.js';
import { createMonitorBody, episodeSchema, historyQuery, monitorParams, monitorSchema, updateMonitorBody } from './schemas.js';

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const tags = ['monitors'];

/** Monitors of the caller's workspace: a metric, a window, filters, a condition; and their episodes. */
export const monitorRoutes: FastifyPluginAsyncZod<{ sql: Sql }> = async (app, { sql }) => {
  app.post('/', {
    schema: { tags, summary: 'Create a monitor', body: createMonitorBody, response: { 201: envelope(monitorSchema), ...errors } },
    handler: async (request, reply) =>
      sendData(request, reply, await monitors.createMonitor(sql, request.auth.workspaceId, request.body), { status: 201 }),
  });

  app.get('/', {
    schema: { tags, summary: "The workspace's monitors with their state", response: { 200: envelope(z.array(monitorSchema)), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await monitors.listMonitors(sql, request.auth.workspaceId)),
  });

  app.get('/:id', {
    schema: { tags, summary: 'One monitor', params: monitorParams, response: { 200: envelope(monitorSchema), ...errors } },
    handler: async (request, reply) =>
      sendData(request, reply, await monitors.getMonitor(sql, request.auth.workspaceId, request.params.id)),
  });

  app.put('/:id', {
    schema: {
      tags,
      summary: "Replace a monitor's definition (its state and history stay)",
      params: monitorParams,
      body: updateMonitorBody,
      response: { 200: envelope(monitorSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await monitors.updateMonitor(sql, request.auth.workspaceId, request.params.id, request.body)),
  });

  app.delete('/:id', {
    schema: {
      tags,
      summary: 'Delete a monitor and its history',
      params: monitorParams,
      response: { 200: envelope(z.object({ id: z.string(), deleted: z.literal(true) })), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await monitors.deleteMonitor(sql, request.auth.workspaceId, request.params.id)),
  });

  app.get('/:id/history', {
    schema: {
      tags,
      summary: "A monitor's episodes, newest first: when it fired and when it resolved",
      params: monitorParams,
      querystring: historyQuery,
      response: { 200: envelope(z.array(episodeSchema)), ...errors },
    },
    handler: async (request, reply) =>
      sendData(
        request,
        reply,
        await monitors.monitorHistory(sql, request.auth.workspaceId, request.params.id, request.query.limit, request.query.offset),
      ),
  });
};
