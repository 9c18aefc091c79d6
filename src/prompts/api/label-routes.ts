import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Sql } from '../../stores/postgres.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import { diffVersions } from '../service/diff.js';
import { diffQuery, promptDiffSchema } from '../model/diff-schemas.js';
import { labelHistoryQuery, labelHistorySchema, labelParams, resolveQuery, type MovedBy } from '../model/label-schemas.js';
import * as labels from '../service/labels.js';
import { promptIdParams, promptSchema } from '../model/schemas.js';

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const tags = ['prompts'];

/** The credential of the request, as label history records it. */
export function movedByOf(request: FastifyRequest): MovedBy {
  const principal = request.auth.principal;
  return principal.kind === 'apiKey'
    ? { apiKeyId: principal.keyId, userId: principal.userId }
    : { apiKeyId: null, userId: principal.userId };
}

/** Labels, resolution by label or version, label history and diffs; mounted under /api/prompt. */
export const promptLabelRoutes: FastifyPluginAsyncZod<{ sql: Sql }> = async (app, { sql }) => {
  app.get('/resolve', {
    schema: {
      tags,
      summary: 'The one version a label, a version or neither (the latest) names',
      querystring: resolveQuery,
      response: { 200: envelope(promptSchema), ...errors },
    },
    handler: async (request, reply) => sendData(request, reply, await labels.resolvePrompt(sql, request.auth.workspaceId, request.query)),
  });

  // PUT and DELETE of a label take the same request and answer the version as it is after.
  const labelRoute = (method: 'PUT' | 'DELETE', summary: string, change: labels.LabelChange) =>
    app.route({
      method,
      url: '/:id/labels/:label',
      schema: { tags, summary, params: labelParams, response: { 200: envelope(promptSchema), ...errors } },
      handler: async (request, reply) =>
        sendData(request, reply, await change(sql, request.auth.workspaceId, request.params.id, request.params.label, movedByOf(request))),
    });
  labelRoute('PUT', 'Move a label to version :id (from wherever it was)', labels.moveLabel);
  labelRoute('DELETE', 'Remove a label from version :id', labels.removeLabel);

  app.get('/:id/label-history', {
    schema: {
      tags,
      summary: 'Every label move of the prompt of version :id, and which version held which label when',
      params: promptIdParams,
      querystring: labelHistoryQuery,
      response: { 200: envelope(labelHistorySchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await labels.labelHistory(sql, request.auth.workspaceId, request.params.id, request.query.label)),
  });

  app.get('/:id/diff', {
    schema: {
      tags,
      summary: 'Differences from version `against` to version :id of one prompt',
      params: promptIdParams,
      querystring: diffQuery,
      response: { 200: envelope(promptDiffSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await diffVersions(sql, request.auth.workspaceId, request.params.id, request.query.against)),
  });
};
