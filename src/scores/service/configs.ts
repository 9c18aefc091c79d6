import type { Sql } from '../../stores/postgres.js';
import { AppError, notFound, validationError } from '../../http/wire/errors.js';
import { configFieldIssues, type CreateScoreConfig, type ScoreConfig, type UpdateScoreConfig } from '../api/config-schemas.js';
import * as table from '../tables/configs-table.js';
import { scoreConfigsChanged } from './config-cache.js';

/** CRUD of score configs; a name is unique in its workspace (409 on a second). Each change forgets the configs this replica keeps (config-cache.ts). */

export async function createScoreConfig(sql: Sql, workspaceId: string, body: CreateScoreConfig): Promise<ScoreConfig> {
  const created = await table.insertScoreConfig(sql, workspaceId, body);
  scoreConfigsChanged(sql);
  if (!created) throw new AppError('CONFLICT', `A score config named "${body.name}" exists in this workspace`, { name: body.name });
  return created;
}

export const listScoreConfigs = (sql: Sql, workspaceId: string, includeArchived: boolean) =>
  table.selectScoreConfigs(sql, workspaceId, includeArchived);

export async function getScoreConfig(sql: Sql, workspaceId: string, id: string): Promise<ScoreConfig> {
  const config = await table.selectScoreConfig(sql, workspaceId, id);
  if (!config) throw notFound('Score config', { id });
  return config;
}

/** The change merged with the stored config, then the rules between fields checked on the whole. */
export async function updateScoreConfig(sql: Sql, workspaceId: string, id: string, change: UpdateScoreConfig): Promise<ScoreConfig> {
  const current = await getScoreConfig(sql, workspaceId, id);
  const merged = {
    min: change.min !== undefined ? change.min : current.min,
    max: change.max !== undefined ? change.max : current.max,
    categories: change.categories !== undefined ? change.categories : current.categories,
    description: change.description !== undefined ? change.description : current.description,
    higherIsBetter: change.higherIsBetter ?? current.higherIsBetter,
    archived: change.archived ?? current.archived,
  };
  const problems = configFieldIssues({ dataType: current.dataType, ...merged });
  if (problems.length > 0) {
    const issues = problems.map((issue) => ({ path: ['body', ...issue.path].join('.'), message: issue.message }));
    throw validationError(`Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  const updated = await table.updateScoreConfig(sql, workspaceId, id, merged);
  scoreConfigsChanged(sql);
  if (!updated) throw notFound('Score config', { id });
  return updated;
}

export async function deleteScoreConfig(sql: Sql, workspaceId: string, id: string) {
  const deleted = await table.deleteScoreConfig(sql, workspaceId, id);
  scoreConfigsChanged(sql);
  if (!deleted) throw notFound('Score config', { id });
  return { id, deleted: true as const };
}
