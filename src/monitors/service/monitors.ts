import type { Sql } from '../../stores/postgres.js';
import { AppError } from '../../http/wire/errors.js';
import type { CreateMonitor, Episode, Monitor } from '../api/schemas.js';
import * as table from '../tables/monitors-table.js';

/** CRUD of one workspace's monitors; another workspace's monitor is not found. */

const notFound = (id: string) => new AppError('NOT_FOUND', `No monitor ${id} in this workspace`, { id });

export const createMonitor = (sql: Sql, workspaceId: string, body: CreateMonitor): Promise<Monitor> =>
  table.insertMonitor(sql, workspaceId, body);

export const listMonitors = (sql: Sql, workspaceId: string): Promise<Monitor[]> => table.listMonitorRows(sql, workspaceId);

export async function getMonitor(sql: Sql, workspaceId: string, id: string): Promise<Monitor> {
  return (await table.selectMonitor(sql, workspaceId, id)) ?? Promise.reject(notFound(id));
}

export async function updateMonitor(sql: Sql, workspaceId: string, id: string, body: CreateMonitor): Promise<Monitor> {
  return (await table.replaceMonitor(sql, workspaceId, id, body)) ?? Promise.reject(notFound(id));
}

export async function deleteMonitor(sql: Sql, workspaceId: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!(await table.deleteMonitorRow(sql, workspaceId, id))) throw notFound(id);
  return { id, deleted: true };
}

export async function monitorHistory(sql: Sql, workspaceId: string, id: string, limit: number, offset: number): Promise<Episode[]> {
  await getMonitor(sql, workspaceId, id);
  return table.selectEpisodes(sql, id, limit, offset);
}
