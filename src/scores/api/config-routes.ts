import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Sql } from '../../stores/postgres.js';
import { recordRoutes } from '../../http/routes/crud-routes.js';
import * as configs from '../service/configs.js';
import {
  createScoreConfigBody,
  listScoreConfigsQuery,
  scoreConfigParams,
  scoreConfigSchema,
  updateScoreConfigBody,
} from './config-schemas.js';

const tags = ['scores'];

/** Score configs of the caller's workspace: what a score of a name may be. */
export const scoreConfigRoutes: FastifyPluginAsyncZod<{ sql: Sql }> = async (app, { sql }) => {
  recordRoutes(app, {
    tags,
    record: scoreConfigSchema,
    params: scoreConfigParams,
    create: {
      summary: 'Create a score config (a name is unique in the workspace)',
      body: createScoreConfigBody,
      more: [409],
      run: (workspaceId, body) => configs.createScoreConfig(sql, workspaceId, body),
    },
    list: {
      summary: 'The score configs of the workspace, by name (archived ones with includeArchived=true)',
      query: listScoreConfigsQuery,
      run: (workspaceId, query) => configs.listScoreConfigs(sql, workspaceId, query.includeArchived),
    },
    get: { summary: 'One score config', run: (workspaceId, id) => configs.getScoreConfig(sql, workspaceId, id) },
    update: {
      method: 'PATCH',
      summary: "Change a config's bounds, categories, description, direction or archived flag (name and type are fixed)",
      body: updateScoreConfigBody,
      run: (workspaceId, id, body) => configs.updateScoreConfig(sql, workspaceId, id, body),
    },
    remove: {
      summary: 'Delete a score config (its scores stay)',
      run: (workspaceId, id) => configs.deleteScoreConfig(sql, workspaceId, id),
    },
  });
};
