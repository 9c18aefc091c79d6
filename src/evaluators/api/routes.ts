import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import * as connections from '../service/connections.js';
import * as evaluators from '../service/evaluators.js';
import { backfill } from '../service/backfill.js';
import {
  backfillBody,
  backfillResultSchema,
  connectionTestSchema,
  createEvaluatorBody,
  createModelConnectionBody,
  evaluatorJobSchema,
  evaluatorSchema,
  idParams,
  modelConnectionSchema,
  updateModelConnectionBody,
} from './schemas.js';

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const deleted = envelope(z.object({ id: z.string(), deleted: z.literal(true) }));

/** Model connections of the caller's workspace: the judges' models and their (encrypted) keys. */
export const modelConnectionRoutes: FastifyPluginAsyncZod<{ deps: connections.ConnectionDeps }> = async (app, { deps }) => {
  const tags = ['evaluators'];
  app.post('/', {
    schema: {
      tags,
      summary: 'Create a model connection (the key is stored encrypted and never answered)',
      body: createModelConnectionBody,
      response: { 201: envelope(modelConnectionSchema), ...errors, 409: errorEnvelopeSchema, 503: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await connections.createConnection(deps, request.auth.workspaceId, request.body), { status: 201 }),
  });
  app.get('/', {
    schema: {
      tags,
      summary: 'The model connections of the workspace, by name',
      response: { 200: envelope(z.array(modelConnectionSchema)), ...errors },
    },
    handler: async (request, reply) => sendData(request, reply, await connections.listConnections(deps, request.auth.workspaceId)),
  });
  app.get('/:id', {
    schema: { tags, summary: 'One model connection', params: idParams, response: { 200: envelope(modelConnectionSchema), ...errors } },
    handler: async (request, reply) =>
      sendData(request, reply, await connections.getConnection(deps, request.auth.workspaceId, request.params.id)),
  });
  app.patch('/:id', {
    schema: {
      tags,
      summary: 'Change a model connection (a new apiKey replaces the stored one)',
      params: idParams,
      body: updateModelConnectionBody,
      response: { 200: envelope(modelConnectionSchema), ...errors, 409: errorEnvelopeSchema, 503: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await connections.updateConnection(deps, request.auth.workspaceId, request.params.id, request.body)),
  });
  app.delete('/:id', {
    schema: {
      tags,
      summary: 'Delete a model connection no evaluator uses',
      params: idParams,
      response: { 200: deleted, ...errors, 409: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await connections.deleteConnection(deps, request.auth.workspaceId, request.params.id)),
  });
  app.post('/:id/test', {
    schema: {
      tags,
      summary: "One small call with the connection's default model: the answer, or the provider's error",
      params: idParams,
      response: { 200: envelope(connectionTestSchema), ...errors, 503: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await connections.testConnection(deps, request.auth.workspaceId, request.params.id)),
  });
};

const jobsQuery = z
  .object({
    status: z.enum(['pending', 'succeeded', 'failed', 'skipped']).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .strict();

/** Evaluators of the caller's workspace: LLM judges and built-in checks, and their jobs. */
export const evaluatorRoutes: FastifyPluginAsyncZod<{ deps: evaluators.EvaluatorDeps }> = async (app, { deps }) => {
  const tags = ['evaluators'];
  app.post('/', {
    schema: {
      tags,
      summary: 'Create an evaluator (active at once: it scores traces that start from now on)',
      body: createEvaluatorBody,
      response: { 201: envelope(evaluatorSchema), ...errors, 409: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await evaluators.createEvaluator(deps, request.auth.workspaceId, request.body), { status: 201 }),
  });
  app.get('/', {
    schema: { tags, summary: 'The evaluators of the workspace, by name', response: { 200: envelope(z.array(evaluatorSchema)), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await evaluators.listEvaluators(deps, request.auth.workspaceId)),
  });
  app.get('/:id', {
    schema: { tags, summary: 'One evaluator', params: idParams, response: { 200: envelope(evaluatorSchema), ...errors } },
    handler: async (request, reply) =>
      sendData(request, reply, await evaluators.getEvaluator(deps, request.auth.workspaceId, request.params.id)),
  });
  app.put('/:id', {
    schema: {
      tags,
      summary: "Replace an evaluator's definition: a new version, which may score targets again",
      params: idParams,
      body: createEvaluatorBody,
      response: { 200: envelope(evaluatorSchema), ...errors, 409: errorEnvelopeSchema },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await evaluators.replaceEvaluator(deps, request.auth.workspaceId, request.params.id, request.body)),
  });
  for (const [action, status] of [
    ['pause', 'paused'],
    ['resume', 'active'],
  ] as const) {
    app.post(`/:id/${action}`, {
      schema: {
        tags,
        summary: action === 'pause' ? 'Pause an evaluator (its pending jobs wait)' : 'Resume a paused evaluator',
        params: idParams,
        response: { 200: envelope(evaluatorSchema), ...errors },
      },
      handler: async (request, reply) =>
        sendData(request, reply, await evaluators.setStatus(deps, request.auth.workspaceId, request.params.id, status)),
    });
  }
  app.delete('/:id', {
    schema: {
      tags,
      summary: 'Delete an evaluator and its jobs (its scores stay)',
      params: idParams,
      response: { 200: deleted, ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await evaluators.deleteEvaluator(deps, request.auth.workspaceId, request.params.id)),
  });
  app.get('/:id/jobs', {
    schema: {
      tags,
      summary: "The evaluator's jobs, newest first: status, attempts, error and the score produced",
      params: idParams,
      querystring: jobsQuery,
      response: { 200: envelope(z.array(evaluatorJobSchema)), ...errors },
    },
    handler: async (request, reply) =>
      sendData(
        request,
        reply,
        await evaluators.listJobs(deps, request.auth.workspaceId, request.params.id, request.query.limit, request.query.status),
      ),
  });
  app.post('/:id/backfill', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary:
        "Queue the evaluator's targets of a past window (or every item of an experiment run), at most maxJobs; a target never gets two jobs of one version",
      params: idParams,
      body: backfillBody,
      response: { 200: envelope(backfillResultSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await backfill(deps, request.auth.workspaceId, request.params.id, request.body)),
  });
};
