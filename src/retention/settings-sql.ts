import type { Sql } from '../stores/postgres.js';
import { notFound } from '../http/wire/errors.js';
import type { Retention, SetRetention } from './schemas.js';

interface SettingRow {
  workspaceId: string;
  environment: string;
  retentionDays: number;
}

/** Every setting of every workspace (the trace store's copy is rewritten from it whole). */
export async function listRetentionSettings(sql: Sql): Promise<SettingRow[]> {
  return sql<SettingRow[]>`
    select workspace_id as "workspaceId", environment, retention_days as "retentionDays"
    from retention_settings order by workspace_id, environment`;
}

export function retentionOf(workspaceId: string, rows: SettingRow[], deploymentDays: number | null): Retention {
  const own = rows.filter((r) => r.workspaceId === workspaceId);
  const retentionDays = own.find((r) => r.environment === '')?.retentionDays ?? null;
  const environments: Record<string, number> = {};
  for (const row of own) if (row.environment !== '') environments[row.environment] = row.retentionDays;
  return { workspaceId, deploymentDays, retentionDays, environments, effectiveDays: retentionDays ?? deploymentDays };
}

export async function getRetention(sql: Sql, workspaceId: string, deploymentDays: number | null): Promise<Retention> {
  const rows = await sql<SettingRow[]>`
    select workspace_id as "workspaceId", environment, retention_days as "retentionDays"
    from retention_settings where workspace_id = ${workspaceId}`;
  return retentionOf(workspaceId, rows, deploymentDays);
}

/** Sets the workspace's default and, when given, replaces its environments' settings, in one transaction. */
export async function setRetention(sql: Sql, workspaceId: string, input: SetRetention, deploymentDays: number | null): Promise<Retention> {
  await sql.begin(async (tx) => {
    const [workspace] = await tx`select id from workspaces where id = ${workspaceId} for update`;
    if (!workspace) throw notFound('Workspace', { workspaceId });
    if (input.retentionDays === null) {
      await tx`delete from retention_settings where workspace_id = ${workspaceId} and environment = ''`;
    } else {
      await tx`
        insert into retention_settings (workspace_id, environment, retention_days) values (${workspaceId}, '', ${input.retentionDays})
        on conflict (workspace_id, environment) do update set retention_days = excluded.retention_days, updated_at = now()`;
    }
    if (input.environments) {
      await tx`delete from retention_settings where workspace_id = ${workspaceId} and environment <> ''`;
      for (const [environment, days] of Object.entries(input.environments)) {
        await tx`insert into retention_settings (workspace_id, environment, retention_days) values (${workspaceId}, ${environment}, ${days})`;
      }
    }
  });
  return getRetention(sql, workspaceId, deploymentDays);
}
