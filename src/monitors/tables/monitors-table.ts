import type postgres from 'postgres';
import type { Sql } from '../../stores/postgres.js';
import type { MonitorFilters } from '../../contract/monitor-metrics.js';
import type { CreateMonitor, Episode, Monitor } from '../api/schemas.js';

/**
 * The SQL on `monitors` and `monitor_episodes` (postgres/0013). The state moves only by the
 * conditional updates `openEpisode` and `closeEpisode`: whichever of two concurrent evaluators
 * updates first wins, the other's update matches no row, so an episode opens and closes once.
 */

interface MonitorRow extends Omit<Monitor, 'lastEvaluatedAt' | 'createdAt' | 'updatedAt' | 'filters'> {
  filters: MonitorFilters;
  lastEvaluatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const toMonitor = (row: MonitorRow): Monitor => ({
  ...row,
  lastEvaluatedAt: row.lastEvaluatedAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const columns = (sql: Sql | postgres.TransactionSql) => sql`
  id, name, metric, score_name as "scoreName", window_seconds as "windowSeconds", filters, condition, enabled, state,
  episode_id as "episodeId", last_value as "lastValue", last_evaluated_at as "lastEvaluatedAt", created_at as "createdAt",
  updated_at as "updatedAt"`;

export async function insertMonitor(sql: Sql, workspaceId: string, body: CreateMonitor): Promise<Monitor> {
  const [row] = await sql<MonitorRow[]>`
    insert into monitors (workspace_id, name, metric, score_name, window_seconds, filters, condition, enabled)
    values (${workspaceId}, ${body.name}, ${body.metric}, ${body.scoreName ?? null}, ${body.windowSeconds},
      ${sql.json(body.filters)}, ${sql.json(body.condition)}, ${body.enabled})
    returning ${columns(sql)}`;
  return toMonitor(row!);
}

export async function listMonitorRows(sql: Sql, workspaceId: string): Promise<Monitor[]> {
  const rows = await sql<MonitorRow[]>`
    select ${columns(sql)} from monitors where workspace_id = ${workspaceId} order by created_at, id`;
  return rows.map(toMonitor);
}

export async function selectMonitor(sql: Sql, workspaceId: string, id: string): Promise<Monitor | undefined> {
  const [row] = await sql<MonitorRow[]>`select ${columns(sql)} from monitors where workspace_id = ${workspaceId} and id = ${id}`;
  return row && toMonitor(row);
}

export async function replaceMonitor(sql: Sql, workspaceId: string, id: string, body: CreateMonitor): Promise<Monitor | undefined> {
  const [row] = await sql<MonitorRow[]>`
    update monitors set name = ${body.name}, metric = ${body.metric}, score_name = ${body.scoreName ?? null},
      window_seconds = ${body.windowSeconds}, filters = ${sql.json(body.filters)}, condition = ${sql.json(body.condition)},
      enabled = ${body.enabled}, updated_at = now()
    where workspace_id = ${workspaceId} and id = ${id}
    returning ${columns(sql)}`;
  return row && toMonitor(row);
}

export async function deleteMonitorRow(sql: Sql, workspaceId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from monitors where workspace_id = ${workspaceId} and id = ${id} returning id`;
  return rows.length > 0;
}

export async function selectEpisodes(sql: Sql, monitorId: string, limit: number, offset: number): Promise<Episode[]> {
  const rows = await sql<Array<Omit<Episode, 'firedAt' | 'resolvedAt'> & { firedAt: Date; resolvedAt: Date | null }>>`
    select id, fired_at as "firedAt", fired_value as "firedValue", resolved_at as "resolvedAt", resolved_value as "resolvedValue"
    from monitor_episodes where monitor_id = ${monitorId}
    order by fired_at desc, id limit ${limit} offset ${offset}`;
  return rows.map((r) => ({ ...r, firedAt: r.firedAt.toISOString(), resolvedAt: r.resolvedAt?.toISOString() ?? null }));
}

/** Every enabled monitor, of every workspace: what one evaluation round looks at. */
export async function selectEnabledMonitors(sql: Sql): Promise<Array<Monitor & { workspaceId: string }>> {
  const rows = await sql<Array<MonitorRow & { workspaceId: string }>>`
    select ${columns(sql)}, workspace_id as "workspaceId" from monitors where enabled order by id`;
  return rows.map((row) => ({ ...toMonitor(row), workspaceId: row.workspaceId }));
}

/** Records the figure of an evaluation that changed no state. */
export async function recordValue(sql: Sql, id: string, value: number | null, at: Date): Promise<void> {
  await sql`update monitors set last_value = ${value}, last_evaluated_at = ${at} where id = ${id}`;
}

/**
 * Opens an episode: true only for the one caller whose update found the monitor not firing.
 * The episode row is written in the same transaction.
 */
export async function openEpisode(
  tx: postgres.TransactionSql,
  params: { id: string; workspaceId: string; episodeId: string; value: number; at: Date },
): Promise<boolean> {
  const moved = await tx`
    update monitors set state = 'firing', episode_id = ${params.episodeId}, last_value = ${params.value}, last_evaluated_at = ${params.at}
    where id = ${params.id} and state <> 'firing'
    returning id`;
  if (moved.length === 0) return false;
  await tx`
    insert into monitor_episodes (id, monitor_id, workspace_id, fired_at, fired_value)
    values (${params.episodeId}, ${params.id}, ${params.workspaceId}, ${params.at}, ${params.value})`;
  return true;
}

/** Closes the open episode `episodeId`: true only for the one caller whose update found it open. */
export async function closeEpisode(
  tx: postgres.TransactionSql,
  params: { id: string; episodeId: string; value: number; at: Date },
): Promise<boolean> {
  const moved = await tx`
    update monitors set state = 'resolved', episode_id = null, last_value = ${params.value}, last_evaluated_at = ${params.at}
    where id = ${params.id} and state = 'firing' and episode_id = ${params.episodeId}
    returning id`;
  if (moved.length === 0) return false;
  await tx`
    update monitor_episodes set resolved_at = ${params.at}, resolved_value = ${params.value} where id = ${params.episodeId}`;
  return true;
}
