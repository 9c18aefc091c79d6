import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import type { PromptFiguresReader } from '../../contract/prompt-figures.js';
import type { PromptScores } from '../../contract/prompt-scores.js';
import { comparePromptVersions } from '../service/compare.js';
import { compareQuery, promptComparisonSchema } from '../model/compare-schemas.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import { paginationMeta, paginationOf } from '../../http/wire/pagination.js';
import { recordRoute } from '../../http/routes/crud-routes.js';
import {
  createPromptBody,
  createVersionBody,
  deletedPromptSchema,
  listPromptsQuery,
  promptIdParams,
  promptSchema,
  renderBody,
  renderedPromptSchema,
  updatePromptBody,
} from '../model/schemas.js';
import * as versions from '../service/versions.js';
import { movedByOf, promptLabelRoutes } from './label-routes.js';
import { promptMetrics } from '../service/metrics.js';
import { promptMetricsQuery, promptMetricsSchema } from '../model/metrics-schemas.js';

const errors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };
const tags = ['prompts'];

/** Prompt versions of the caller's workspace; every query is confined to `request.auth.workspaceId`. */
export const promptRoutes: FastifyPluginAsyncZod<{
  sql: Sql;
  promptFigures: PromptFiguresReader;
  /** Score comparisons and means per version (the scores feature); absent, the metrics carry no scores and compare is not served. */
  promptScores?: PromptScores;
}> = async (app, { sql, promptFigures, promptScores }) => {
  await app.register(promptLabelRoutes, { sql });

  app.get('/:id/metrics', {
    config: { readBarrier: 'workspace' },
    schema: {
      tags,
      summary:
        'Per version of the prompt of :id: calls, error rate, tokens, cost, latency and time to first token of the spans that used it',
      params: promptIdParams,
      querystring: promptMetricsQuery,
      response: { 200: envelope(promptMetricsSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(
        request,
        reply,
        await promptMetrics(sql, promptFigures, request.auth.workspaceId, request.params.id, request.query, promptScores),
      ),
  });

  if (promptScores) {
    app.get('/:id/compare', {
      config: { readBarrier: 'workspace' },
      schema: {
        tags,
        summary:
          'The version of :id against another (`against`): calls, cost per call, latency, error rate, and per score name the test of the difference with a verdict',
        params: promptIdParams,
        querystring: compareQuery,
        response: { 200: envelope(promptComparisonSchema), ...errors },
      },
      handler: async (request, reply) =>
        sendData(
          request,
          reply,
          await comparePromptVersions(sql, promptFigures, promptScores, request.auth.workspaceId, request.params.id, request.query),
        ),
    });
  }
  recordRoute(app, tags, {
    method: 'POST',
    url: '/',
    summary: 'Create a prompt (its first version)',
    body: createPromptBody,
    answer: promptSchema,
    status: 201,
    more: [409],
    run: (workspaceId, { body }) => versions.createPrompt(sql, workspaceId, body),
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/',
    summary: 'List prompt versions: name ascending, then version descending',
    query: listPromptsQuery,
    answer: z.array(promptSchema),
    meta: paginationMeta,
    run: async (workspaceId, { query }) => {
      const { prompts, total } = await versions.listPrompts(sql, workspaceId, query);
      return { data: prompts, meta: { pagination: paginationOf(query, prompts.length, total) } };
    },
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id',
    summary: 'One prompt version',
    params: promptIdParams,
    answer: promptSchema,
    run: (workspaceId, { params }) => versions.getPrompt(sql, workspaceId, params.id),
  });

  recordRoute(app, tags, {
    method: 'POST',
    url: '/:id/versions',
    summary: 'Create a version from the record :id with changes',
    params: promptIdParams,
    body: createVersionBody,
    answer: promptSchema,
    status: 201,
    more: [409],
    run: (workspaceId, { params, body }, request) => versions.createVersion(sql, workspaceId, params.id, body, movedByOf(request)),
  });

  recordRoute(app, tags, {
    method: 'PATCH',
    url: '/:id',
    summary: 'Update a prompt: a new, latest version numbered after the highest one',
    params: promptIdParams,
    body: updatePromptBody,
    answer: promptSchema,
    status: 201,
    more: [409],
    run: (workspaceId, { params, body }) => versions.updatePrompt(sql, workspaceId, params.id, body),
  });

  recordRoute(app, tags, {
    method: 'DELETE',
    url: '/:id',
    summary: 'Delete a prompt: every version of its group',
    params: promptIdParams,
    answer: deletedPromptSchema,
    run: (workspaceId, { params }) => versions.deletePrompt(sql, workspaceId, params.id),
  });

  recordRoute(app, tags, {
    method: 'POST',
    url: '/:id/render',
    summary: 'Fill the placeholders of a version',
    params: promptIdParams,
    body: renderBody,
    answer: renderedPromptSchema,
    run: (workspaceId, { params, body }) => versions.renderPrompt(sql, workspaceId, params.id, body),
  });
};
