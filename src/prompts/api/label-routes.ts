import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Sql } from '../../stores/postgres.js';
import { recordRoute } from '../../http/routes/crud-routes.js';
import { diffVersions } from '../service/diff.js';
import { diffQuery, promptDiffSchema } from '../model/diff-schemas.js';
import { labelHistoryQuery, labelHistorySchema, labelParams, resolveQuery, type MovedBy } from '../model/label-schemas.js';
import * as labels from '../service/labels.js';
import { promptIdParams, promptSchema } from '../model/schemas.js';

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
  recordRoute(app, tags, {
    method: 'GET',
    url: '/resolve',
    summary: 'The one version a label, a version or neither (the latest) names',
    query: resolveQuery,
    answer: promptSchema,
    run: (workspaceId, { query }) => labels.resolvePrompt(sql, workspaceId, query),
  });

  // PUT and DELETE of a label take the same request and answer the version as it is after.
  for (const [method, summary, change] of [
    ['PUT', 'Move a label to version :id (from wherever it was)', labels.moveLabel],
    ['DELETE', 'Remove a label from version :id', labels.removeLabel],
  ] as const) {
    recordRoute(app, tags, {
      method,
      url: '/:id/labels/:label',
      summary,
      params: labelParams,
      answer: promptSchema,
      run: (workspaceId, { params }, request) => change(sql, workspaceId, params.id, params.label, movedByOf(request)),
    });
  }

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/label-history',
    summary: 'Every label move of the prompt of version :id, and which version held which label when',
    params: promptIdParams,
    query: labelHistoryQuery,
    answer: labelHistorySchema,
    run: (workspaceId, { params, query }) => labels.labelHistory(sql, workspaceId, params.id, query.label),
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/diff',
    summary: 'Differences from version `against` to version :id of one prompt',
    params: promptIdParams,
    query: diffQuery,
    answer: promptDiffSchema,
    run: (workspaceId, { params, query }) => diffVersions(sql, workspaceId, params.id, query.against),
  });
};
