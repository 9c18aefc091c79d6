import type { Config } from '../../config.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { envelope, sendData } from '../../http/wire/envelope.js';
import { clientErrorsOrNotFound, queryTooExpensiveSchema } from './route-errors.js';
import { ingestTraces, type TraceIngest } from '../ingest/ingest.js';
import type { TraceScores } from '../../contract/trace-scores.js';
import { averaged, readWithScores } from './scored-reads.js';
import { deleteTrace, getSpan, getTrace, getTraceTree } from '../query/read.js';
import { listTraces } from '../query/list.js';
import { queryLimitsOf } from '../model/query-limits.js';
import { spanParams, traceTreeSchema } from '../model/wire/span-tree-schemas.js';
import {
  batchIngestBodySchema,
  ingestBodySchema,
  ingestResultSchema,
  listMetaSchema,
  listTracesQuery,
  traceDetailSchema,
  scoredTraceListItemSchema,
  storedSpanSchema,
  traceParams,
} from '../model/schemas.js';

const errors = clientErrorsOrNotFound;
const tags = ['traces'];

/** Native ingestion and retrieval; every handler is confined to `request.auth.workspaceId`. */
export const traceRoutes: FastifyPluginAsyncZod<{
  clickhouse: ClickHouseClient;
  /** The app's ingest: its writer also gives the list the writes not yet applied (fresh/). */
  ingest: TraceIngest;
  config: Config;
  /** The scores the reads carry and a delete removes (the scores feature); absent, reads carry none. */
  scores?: TraceScores;
}> = async (app, { clickhouse, ingest, config, scores }) => {
  const { writer } = ingest;
  const limits = queryLimitsOf(config);
  // Bodies are parsed in the thread's ingest turns (http/server/turns.ts), as fastify parses JSON.
  const parseJson = app.getDefaultJsonParser(
    app.initialConfig.onProtoPoisoning ?? 'error',
    app.initialConfig.onConstructorPoisoning ?? 'error',
  );
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void ingest.turns.take().then(() => parseJson(request, body as string, done));
  });
  const ingestSchema = {
    summary: 'Ingest traces with their spans (idempotent upsert by trace and span id)',
    response: { 200: envelope(ingestResultSchema), ...errors },
    tags,
  };

  app.post('/', {
    schema: { ...ingestSchema, body: ingestBodySchema },
    handler: async (request, reply) => sendData(request, reply, await ingestTraces(ingest, request.auth.workspaceId, request.body.traces)),
  });

  app.post('/batch', {
    schema: { ...ingestSchema, summary: 'Ingest up to 100 traces', body: batchIngestBodySchema },
    handler: async (request, reply) => sendData(request, reply, await ingestTraces(ingest, request.auth.workspaceId, request.body.traces)),
  });

  app.get('/', {
    schema: {
      summary: 'List traces, newest first (or by the sort given); filters, offset or cursor pages',
      querystring: listTracesQuery,
      response: { 200: envelope(z.array(scoredTraceListItemSchema), listMetaSchema), ...errors, 422: queryTooExpensiveSchema },
      tags,
    },
    handler: async (request, reply) => {
      const workspaceId = request.auth.workspaceId;
      const { score, scoreMin, scoreMax, scoreValue } = request.query;
      // The list waits for no writer, but a filter by score reads the stored scores: those answered so far first.
      if (score !== undefined) await scores?.settled(workspaceId);
      const scoreCondition =
        score !== undefined ? scores?.traceCondition({ name: score, min: scoreMin, max: scoreMax, value: scoreValue }) : undefined;
      const { items, pagination } = await listTraces(clickhouse, workspaceId, request.query, limits, writer, scoreCondition);
      const averagesOf = async (traceIds: string[]) => (scores ? scores.averagesOfTraces(workspaceId, traceIds) : new Map());
      return sendData(request, reply, await averaged(items, (item) => item.traceId, averagesOf), { meta: { pagination } });
    },
  });

  app.get('/:id', {
    config: { readBarrier: 'trace' },
    schema: {
      summary: 'One trace with all its spans',
      params: traceParams,
      response: { 200: envelope(traceDetailSchema), ...errors },
      tags,
    },
    handler: async (request, reply) => {
      const { workspaceId } = request.auth;
      const { id } = request.params;
      return sendData(request, reply, await readWithScores(getTrace(clickhouse, workspaceId, id), scores?.ofTrace(workspaceId, id)));
    },
  });

  app.get('/:id/tree', {
    config: { readBarrier: 'trace' },
    schema: {
      summary: 'One trace with all its spans as slim nodes: no input, output, attributes, events, metadata, status message or pricing',
      params: traceParams,
      response: { 200: envelope(traceTreeSchema), ...errors },
      tags,
    },
    handler: async (request, reply) => {
      const { workspaceId } = request.auth;
      const { id } = request.params;
      return sendData(request, reply, await readWithScores(getTraceTree(clickhouse, workspaceId, id), scores?.ofTrace(workspaceId, id)));
    },
  });

  app.get('/:id/spans/:spanId', {
    config: { readBarrier: 'trace' },
    schema: {
      summary: 'One span of a trace, whole (as in GET /api/traces/{id})',
      params: spanParams,
      response: { 200: envelope(storedSpanSchema), ...errors },
      tags,
    },
    handler: async (request, reply) =>
      sendData(request, reply, await getSpan(clickhouse, request.auth.workspaceId, request.params.id, request.params.spanId)),
  });

  app.delete('/:id', {
    config: { readBarrier: 'trace' },
    schema: {
      summary: 'Delete a trace, all its spans and their scores',
      params: traceParams,
      response: { 200: envelope(z.object({ traceId: z.string(), deleted: z.literal(true) })), ...errors },
      tags,
    },
    handler: async (request, reply) => {
      const deleted = await deleteTrace(clickhouse, request.auth.workspaceId, request.params.id);
      await scores?.deleteOfTrace(request.auth.workspaceId, request.params.id);
      return sendData(request, reply, deleted);
    },
  });
};
