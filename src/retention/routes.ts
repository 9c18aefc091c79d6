import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ClickHouseClient } from '../stores/clickhouse.js';
import type { Sql } from '../stores/postgres.js';
import { envelope, errorEnvelopeSchema, sendData } from '../http/wire/envelope.js';
import { applyRetention, syncRetentionSettings, type RetentionTarget } from './engine-retention.js';
import { getRetention, setRetention } from './settings-sql.js';
import { dailyCounts, estimatedStorage, oldestDataAt, usageDays } from './usage-sql.js';
import { appliedSchema, applyRetentionBody, retentionSchema, setRetentionBody, usageSchema, workspaceParams } from './schemas.js';

interface RetentionDeps {
  sql: Sql;
  clickhouse: ClickHouseClient;
  /** LOUPE_RETENTION_DAYS; undefined keeps data forever. */
  deploymentDays: number | undefined;
  /** CLICKHOUSE_CLUSTER: the mutations name the cluster's `_local` tables. */
  target: RetentionTarget;
}

const adminErrors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 404: errorEnvelopeSchema, 429: errorEnvelopeSchema };
const security = [{ adminToken: [] }];

/** Under /api/admin (the admin token's hook is the enclosing plugin's). */
export const retentionAdminRoutes: FastifyPluginAsyncZod<RetentionDeps> = async (app, { sql, clickhouse, deploymentDays, target }) => {
  const deployment = deploymentDays ?? null;

  app.get('/workspaces/:workspaceId/retention', {
    schema: { tags: ['admin'], security, params: workspaceParams, response: { 200: envelope(retentionSchema), ...adminErrors } },
    handler: async (request, reply) => sendData(request, reply, await getRetention(sql, request.params.workspaceId, deployment)),
  });

  // The new setting reaches rows inserted from now on at once (this instance) or within a
  // minute (another's dictionary), and existing rows through a mutation started here, which
  // the engine runs in the background.
  app.put('/workspaces/:workspaceId/retention', {
    schema: {
      tags: ['admin'],
      security,
      params: workspaceParams,
      body: setRetentionBody,
      response: { 200: envelope(retentionSchema), ...adminErrors },
    },
    handler: async (request, reply) => {
      const retention = await setRetention(sql, request.params.workspaceId, request.body, deployment);
      await syncRetentionSettings(sql, clickhouse, deployment, target);
      await applyRetention(clickhouse, { workspaceId: request.params.workspaceId, wait: false, target });
      return sendData(request, reply, retention);
    },
  });

  app.post('/retention/apply', {
    schema: { tags: ['admin'], security, body: applyRetentionBody, response: { 200: envelope(appliedSchema), ...adminErrors } },
    handler: async (request, reply) => {
      const workspaceId = request.body?.workspaceId;
      await syncRetentionSettings(sql, clickhouse, deployment, target);
      const tables = await applyRetention(clickhouse, { workspaceId, wait: true, target });
      return sendData(request, reply, { tables, workspaceId: workspaceId ?? null });
    },
  });
};

const errors = { 401: errorEnvelopeSchema, 403: errorEnvelopeSchema };

/** The caller's workspace: its retention (read only) and its usage. */
export const retentionRoutes: FastifyPluginAsyncZod<RetentionDeps> = async (app, { sql, clickhouse, deploymentDays, target }) => {
  const deployment = deploymentDays ?? null;

  app.get('/retention', {
    schema: { tags: ['retention'], response: { 200: envelope(retentionSchema), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await getRetention(sql, request.auth.workspaceId, deployment)),
  });

  app.get('/usage', {
    config: { readBarrier: 'workspace' },
    schema: { tags: ['retention'], response: { 200: envelope(usageSchema), ...errors } },
    handler: async (request, reply) => {
      const workspaceId = request.auth.workspaceId;
      const [days, storage, oldest, retention] = await Promise.all([
        dailyCounts(clickhouse, workspaceId),
        estimatedStorage(clickhouse, workspaceId, target),
        oldestDataAt(clickhouse, workspaceId),
        getRetention(sql, workspaceId, deployment),
      ]);
      return sendData(request, reply, {
        description:
          `Live traces and spans a day by start time (UTC) over the last ${usageDays} days, days without data left out; ` +
          'storage on disk is an estimate: the engine counts bytes per table, not per workspace, so each table’s bytes ' +
          'are shared by the workspace’s share of its stored rows; oldestDataAt is the start of the oldest span kept.',
        days,
        storage,
        oldestDataAt: oldest,
        retention,
      });
    },
  });
};
