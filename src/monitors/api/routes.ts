import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import { recordRoute, recordRoutes } from '../../http/routes/crud-routes.js';
import * as monitors from '../service/monitors.js';
import { createMonitorBody, episodeSchema, historyQuery, monitorParams, monitorSchema, updateMonitorBody } from './schemas.js';

const tags = ['monitors'];

/** Monitors of the caller's workspace: a metric, a window, filters, a condition; and their episodes. */
export const monitorRoutes: FastifyPluginAsyncZod<{ sql: Sql }> = async (app, { sql }) => {
  recordRoutes(app, {
    tags,
    record: monitorSchema,
    params: monitorParams,
    create: {
      summary: 'Create a monitor',
      body: createMonitorBody,
      run: (workspaceId, body) => monitors.createMonitor(sql, workspaceId, body),
    },
    list: { summary: "The workspace's monitors with their state", run: (workspaceId) => monitors.listMonitors(sql, workspaceId) },
    get: { summary: 'One monitor', run: (workspaceId, id) => monitors.getMonitor(sql, workspaceId, id) },
    update: {
      method: 'PUT',
      summary: "Replace a monitor's definition (its state and history stay)",
      body: updateMonitorBody,
      run: (workspaceId, id, body) => monitors.updateMonitor(sql, workspaceId, id, body),
    },
    remove: { summary: 'Delete a monitor and its history', run: (workspaceId, id) => monitors.deleteMonitor(sql, workspaceId, id) },
  });

  recordRoute(app, tags, {
    method: 'GET',
    url: '/:id/history',
    summary: "A monitor's episodes, newest first: when it fired and when it resolved",
    params: monitorParams,
    query: historyQuery,
    answer: z.array(episodeSchema),
    run: (workspaceId, { params, query }) => monitors.monitorHistory(sql, workspaceId, params.id, query.limit, query.offset),
  });
};
