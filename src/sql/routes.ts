import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { ClickHouseClient } from '../stores/clickhouse.js';
import { envelope, errorEnvelopeSchema, sendData } from '../http/wire/envelope.js';
import { SqlAdmission } from './admission.js';
import { exportSqlQuery, runSqlQuery, type ExportFormat } from './query.js';
import { sqlBodySchema, sqlMetaSchema, sqlResultSchema, type SqlStatistics } from './schemas.js';
import { SqlSession } from './session.js';

const errors = {
  400: errorEnvelopeSchema,
  401: errorEnvelopeSchema,
  403: errorEnvelopeSchema,
  422: errorEnvelopeSchema,
  429: errorEnvelopeSchema,
};

const contentTypes: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
};

/** The figures of an export, which has no envelope to carry them. */
function statisticsHeaders(statistics: SqlStatistics): Record<string, string> {
  return {
    'x-loupe-rows-read': String(statistics.rowsRead),
    'x-loupe-bytes-read': String(statistics.bytesRead),
    'x-loupe-elapsed-ms': statistics.elapsedMs.toFixed(1),
  };
}

/** Queries of one organization that may wait for their turn at once; more answer 429 at once. */
const maxWaitingPerOrganization = 16;

/**
 * POST /api/sql: one read-only query over the caller's workspace (query.ts). Inside the
 * authenticated scope, so it counts against the plan's rate limit like every other request.
 */
export const sqlRoutes: FastifyPluginAsyncZod<{ clickhouse: ClickHouseClient; config: Config }> = async (app, { clickhouse, config }) => {
  const session = new SqlSession(config, clickhouse);
  const admission = new SqlAdmission({
    perOrganization: config.LOUPE_SQL_MAX_CONCURRENT,
    total: config.LOUPE_SQL_MAX_RUNNING,
    maxWaitMs: config.LOUPE_SQL_MAX_WAIT_MS,
    maxWaitingPerOrganization: maxWaitingPerOrganization,
  });
  app.addHook('onClose', async () => session.close());

  app.post('/', {
    config: { readBarrier: 'workspace' },
    schema: {
      summary: "Run one read-only SQL query over the workspace's spans and traces",
      description: 'Views, columns, examples and limits: clickhouse/README.md, section "SQL endpoint".',
      body: sqlBodySchema,
      response: {
        200: z.union([envelope(sqlResultSchema, sqlMetaSchema), z.string().describe('csv, jsonl or parquet: the file itself')]),
        ...errors,
      },
      tags: ['sql'],
    },
    handler: async (request, reply) => {
      // The client went away before its answer: its query leaves the queue, or the engine stops it.
      const gone = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) gone.abort(new Error('The client closed the connection'));
      });
      const release = await admission.admit(request.auth.organizationId, gone.signal);
      try {
        const { format, ...rest } = request.body;
        if (format === 'json') {
          const { result, statistics } = await runSqlQuery(session, request.auth.workspaceId, { ...rest, format }, config, gone.signal);
          return sendData(request, reply, result, { meta: { statistics, rowCount: result.rows.length } });
        }
        const { file, statistics } = await exportSqlQuery(session, request.auth.workspaceId, { ...rest, format }, config, gone.signal);
        // A Buffer is sent as it is, past the response schema's serializer.
        return reply
          .code(200)
          .headers(statisticsHeaders(statistics))
          .header('content-type', contentTypes[format])
          .header('content-disposition', `attachment; filename="loupe-query.${format}"`)
          .send(file as unknown as string);
      } finally {
        release();
      }
    },
  });
};
