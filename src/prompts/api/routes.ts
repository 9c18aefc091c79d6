import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import type { PromptFiguresReader } from '../../contract/prompt-figures.js';
import type { PromptScores } from '../../contract/prompt-scores.js';
import { comparePromptVersions } from '../service/compare.js';
import { compareQuery, promptComparisonSchema } from '../model/compare-schemas.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import { paginationMeta, paginationOf } from '../../http/wire/pagination.js';
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
const writeErrors = { ...errors, 409: errorEnvelopeSchema };
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
  app.post('/', {
    schema: {
      tags,
      summary: 'Create a prompt (its first version)',
      body: createPromptBody,
      response: { 201: envelope(promptSchema), ...writeErrors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await versions.createPrompt(sql, request.auth.workspaceId, request.body), { status: 201 }),
  });

  app.get('/', {
    schema: {
      tags,
      summary: 'List prompt versions: name ascending, then version descending',
      querystring: listPromptsQuery,
      response: { 200: envelope(z.array(promptSchema), paginationMeta), ...errors },
    },
    handler: async (request, reply) => {
      const { prompts, total } = await versions.listPrompts(sql, request.auth.workspaceId, request.query);
      return sendData(request, reply, prompts, { meta: { pagination: paginationOf(request.query, prompts.length, total) } });
    },
  });

  app.get('/:id', {
    schema: { tags, summary: 'One prompt version', params: promptIdParams, response: { 200: envelope(promptSchema), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await versions.getPrompt(sql, request.auth.workspaceId, request.params.id)),
  });

  app.post('/:id/versions', {
    schema: {
      tags,
      summary: 'Create a version from the record :id with changes',
      params: promptIdParams,
      body: createVersionBody,
      response: { 201: envelope(promptSchema), ...writeErrors },
    },
    handler: async (request, reply) =>
      sendData(
        request,
        reply,
        await versions.createVersion(sql, request.auth.workspaceId, request.params.id, request.body, movedByOf(request)),
        {
          status: 201,
        },
      ),
  });

  app.patch('/:id', {
    schema: {
      tags,
      summary: 'Update a prompt: a new, latest version numbered after the highest one',
      params: promptIdParams,
      body: updatePromptBody,
      response: { 201: envelope(promptSchema), ...writeErrors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await versions.updatePrompt(sql, request.auth.workspaceId, request.params.id, request.body), {
        status: 201,
      }),
  });

  app.delete('/:id', {
    schema: {
      tags,
      summary: 'Delete a prompt: every version of its group',
      params: promptIdParams,
      response: { 200: envelope(deletedPromptSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await versions.deletePrompt(sql, request.auth.workspaceId, request.params.id)),
  });

  app.post('/:id/render', {
    schema: {
      tags,
      summary: 'Fill the placeholders of a version',
      params: promptIdParams,
      body: renderBody,
      response: { 200: envelope(renderedPromptSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await versions.renderPrompt(sql, request.auth.workspaceId, request.params.id, request.body)),
  });
};
