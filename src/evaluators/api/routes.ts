import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { recordRoute, recordRoutes } from '../../http/routes/crud-routes.js';
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

/** Model connections of the caller's workspace: the judges' models and their (encrypted) keys. */
export const modelConnectionRoutes: FastifyPluginAsyncZod<{ deps: connections.ConnectionDeps }> = async (app, { deps }) => {
  const tags = ['evaluators'];
  recordRoutes(app, {
    tags,
    record: modelConnectionSchema,
    params: idParams,
    create: {
      summary: 'Create a model connection (the key is stored encrypted and never answered)',
      body: createModelConnectionBody,
      more: [409, 503],
      run: (workspaceId, body) => connections.createConnection(deps, workspaceId, body),
    },
    list: {
      summary: 'The model connections of the workspace, by name',
      run: (workspaceId) => connections.listConnections(deps, workspaceId),
    },
    get: { summary: 'One model connection', run: (workspaceId, id) => connections.getConnection(deps, workspaceId, id) },
    update: {
      method: 'PATCH',
      summary: 'Change a model connection (a new apiKey replaces the stored one)',
      body: updateModelConnectionBody,
      more: [409, 503],
      run: (workspaceId, id, body) => connections.updateConnection(deps, workspaceId, id, body),
    },
    remove: {
      summary: 'Delete a model connection no evaluator uses',
      more: [409],
      run: (workspaceId, id) => connections.deleteConnection(deps, workspaceId, id),
    },
  });
  recordRoute(app, tags, {
    method: 'POST',
    url: '/:id/test',
    summary: "One small call with the connection's default model: the answer, or the provider's error",
    params: idParams,
    answer: connectionTestSchema,
    more: [503],
    run: (workspaceId, { params }) => connections.testConnection(deps, workspaceId, params.id),
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
  recordRoutes(app, {
    tags,
    record: evaluatorSchema,
    params: idParams,
    create: {
      summary: 'Create an evaluator (active at once: it scores traces that start from now on)',
      body: createEvaluatorBody,
      more: [409],
      run: (workspaceId, body) => evaluators.createEvaluator(deps, workspaceId, body),
    },
    list: { summary: 'The evaluators of the workspace, by name', run: (workspaceId) => evaluators.listEvaluators(deps, workspaceId) },
    get: { summary: 'One evaluator', run: (workspaceId, id) => evaluators.getEvaluator(deps, workspaceId, id) },
    update: {
      method: 'PUT',
      summary: "Replace an evaluator's definition: a new version, which may score targets again",
      body: createEvaluatorBody,
      more: [409],
      run: (workspaceId, id, body) => evaluators.replaceEvaluator(deps, workspaceId, id, body),
    },
    remove: {
      summary: 'Delete an evaluator and its jobs (its scores stay)',
      run: (workspaceId, id) => evaluators.deleteEvaluator(deps, workspaceId, id),
    },
  });
  for (const [action, status] of [
    ['pause', 'paused'],
    ['resume', 'active'],
  ] as const) {
    recordRoute(app, tags, {
      method: 'POST',
      url: `/:id/${action}`,
      summary: action === 'pause' ? 'Pause an evaluator (its pending jobs wait)' : 'Resume a paused evaluator',
      params: idParams,
      answer: evaluatorSchema,
      run: (workspaceId, { params }) => evaluators.setStatus(deps, workspaceId, params.id, status),
    });
  }
  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/jobs',
    summary: "The evaluator's jobs, newest first: status, attempts, error and the score produced",
    params: idParams,
    query: jobsQuery,
    answer: z.array(evaluatorJobSchema),
    run: (workspaceId, { params, query }) => evaluators.listJobs(deps, workspaceId, params.id, query.limit, query.status),
  });
  recordRoute(app, tags, {
    method: 'POST',
    url: '/:id/backfill',
    readBarrier: 'workspace',
    summary:
      "Queue the evaluator's targets of a past window (or every item of an experiment run), at most maxJobs; a target never gets two jobs of one version",
    params: idParams,
    body: backfillBody,
    answer: backfillResultSchema,
    run: (workspaceId, { params, body }) => backfill(deps, workspaceId, params.id, body),
  });
};
