import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import * as configs from '../service/configs.js';
import {
  createScoreConfigBody,
  listScoreConfigsQuery,
  scoreConfigParams,
  scoreConfigSchema,
  updateScoreConfigBody,
} from './config-schemas.js';

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const tags = ['scores'];

/** Score configs of the caller's workspace: what a score of a name may be. */
export const scoreConfigRoutes: FastifyPluginAsyncZod<{ sql: Sql }> = async (app, { sql }) => {
  app.post('/', {
    schema: {
      tags,
      summary: 'Create a score config (a name is unique in the workspace)',
      body: createScoreConfigBody,
      response: { 201: envelope(scoreConfigSchema), ...errors, 409: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await configs.createScoreConfig(sql, request.auth.workspaceId, request.body), { status: 201 }),
  });

  app.get('/', {
    schema: {
      tags,
      summary: 'The score configs of the workspace, by name (archived ones with includeArchived=true)',
      querystring: listScoreConfigsQuery,
      response: { 200: envelope(z.array(scoreConfigSchema)), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await configs.listScoreConfigs(sql, request.auth.workspaceId, request.query.includeArchived)),
  });

  app.get('/:id', {
    schema: { tags, summary: 'One score config', params: scoreConfigParams, response: { 200: envelope(scoreConfigSchema), ...errors } },
    handler: async (request, reply) =>
      sendData(request, reply, await configs.getScoreConfig(sql, request.auth.workspaceId, request.params.id)),
  });

  app.patch('/:id', {
    schema: {
      tags,
      summary: "Change a config's bounds, categories, description, direction or archived flag (name and type are fixed)",
      params: scoreConfigParams,
      body: updateScoreConfigBody,
      response: { 200: envelope(scoreConfigSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await configs.updateScoreConfig(sql, request.auth.workspaceId, request.params.id, request.body)),
  });

  app.delete('/:id', {
    schema: {
      tags,
      summary: 'Delete a score config (its scores stay)',
      params: scoreConfigParams,
      response: { 200: envelope(z.object({ id: z.string(), deleted: z.literal(true) })), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await configs.deleteScoreConfig(sql, request.auth.workspaceId, request.params.id)),
  });
};
