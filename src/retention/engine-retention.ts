import type { ClickHouseClient } from '../stores/clickhouse.js';
import type { Sql } from '../stores/postgres.js';
import { listRetentionSettings } from './settings-sql.js';

/**
 * The trace store's side of retention (clickhouse/0016_retention.sql): the settings copied
 * from PostgreSQL into `retention_settings`, read by the engine through the dictionary
 * `retention_days` when it computes a row's `expires_at` at insert, and the mutations that
 * recompute `expires_at` of existing rows after a change. The engine's TTL then drops the
 * expired rows: the service never deletes rows itself.
 */

/** A row's retention in days, for tables with an environment column; tombstones keep the workspace's longest. */
const environmentDays =
  "dictGetOrDefault('retention_days', 'days', (workspace_id, environment), " +
  "dictGetOrDefault('retention_days', 'days', (workspace_id, ''), " +
  "dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))";
const workspaceLongestDays =
  "dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), " +
  "dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))";
const tombstoneAware = `if(is_deleted = 1, ${workspaceLongestDays}, ${environmentDays})`;

/** The same expression as the column's DEFAULT in clickhouse/0016_retention.sql (0 days: forever). */
const expiresAt = (time: string, days: string) =>
  `toDateTime(least(toDateTime64(${time}, 0, 'UTC') + toIntervalDay(if((${days}) = 0, 100000, ${days})), ` +
  `toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC')`;

/** Every table of trace data, with its expiry expression. Prompt data lives in PostgreSQL and never expires. */
export const retainedTables: { table: string; expiresAt: string }[] = [
  { table: 'spans', expiresAt: expiresAt('start_time', tombstoneAware) },
  { table: 'traces', expiresAt: expiresAt('start_time', tombstoneAware) },
  { table: 'scores', expiresAt: expiresAt('timestamp', tombstoneAware) },
  { table: 'score_summary', expiresAt: expiresAt('timestamp', tombstoneAware) },
  { table: 'score_targets', expiresAt: expiresAt('timestamp', tombstoneAware) },
  // The prompt versions' scores (clickhouse/0025): the prompt spans as spans, the rest as scores.
  { table: 'prompt_spans', expiresAt: expiresAt('start_time', tombstoneAware) },
  { table: 'prompt_version_scores', expiresAt: expiresAt('timestamp', tombstoneAware) },
  { table: 'genai_log_records', expiresAt: expiresAt('time', workspaceLongestDays) },
  { table: 'session_traces', expiresAt: expiresAt('start_time', workspaceLongestDays) },
  { table: 'user_traces', expiresAt: expiresAt('start_time', workspaceLongestDays) },
];

interface EngineSettingRow {
  workspace_id: string;
  environment: string;
  days: number;
  longest_days: number;
  generation: number;
}

/**
 * Rewrites the trace store's copy of the settings from PostgreSQL as one new generation (the
 * view reads the newest only, so a removed setting disappears) and reloads the dictionary, so
 * rows inserted from now on get the new expiry. Another instance's dictionary reloads within a
 * minute (its LIFETIME).
 */
export async function syncRetentionSettings(
  sql: Sql,
  clickhouse: ClickHouseClient,
  deploymentDays: number | null,
  target: RetentionTarget = {},
): Promise<void> {
  const settings = await listRetentionSettings(sql);
  const generation = Date.now();
  const deployment = deploymentDays ?? 0;
  const rows: EngineSettingRow[] = [{ workspace_id: '', environment: '', days: deployment, longest_days: deployment, generation }];
  const byWorkspace = new Map<string, typeof settings>();
  for (const row of settings) byWorkspace.set(row.workspaceId, [...(byWorkspace.get(row.workspaceId) ?? []), row]);
  for (const [workspaceId, own] of byWorkspace) {
    const workspaceDays = own.find((r) => r.environment === '')?.retentionDays ?? deployment;
    // 0 is forever, longer than any number of days.
    const all = [workspaceDays, ...own.filter((r) => r.environment !== '').map((r) => r.retentionDays)];
    const longest = all.includes(0) ? 0 : Math.max(...all);
    rows.push({ workspace_id: workspaceId, environment: '', days: workspaceDays, longest_days: longest, generation });
    for (const row of own) {
      if (row.environment === '') continue;
      rows.push({ workspace_id: workspaceId, environment: row.environment, days: row.retentionDays, longest_days: longest, generation });
    }
  }
  await clickhouse.insert({ table: 'retention_settings', values: rows, format: 'JSONEachRow' });
  await clickhouse.command({ query: reloadRetentionDays(target) });
}

/**
 * Where the statements of retention go: on one node the tables by their names; on a cluster
 * (CLICKHOUSE_CLUSTER, src/stores/clickhouse-ddl.ts) the rows live in the replicated
 * `<name>_local` tables behind the Distributed ones, which take no mutation, so the UPDATE
 * and MATERIALIZE TTL name those `ON CLUSTER` (the engine runs an ALTER of a replicated table
 * once a shard; its replicas follow), and every node reloads its copy of the dictionary.
 */
export interface RetentionTarget {
  cluster?: string | undefined;
}

/** The statements that recompute `expires_at` of existing rows, table by table (see applyRetention). */
export function retentionMutations(
  target: RetentionTarget,
  options: { workspaceId?: string | undefined; wait: boolean },
): Array<{ table: string; statements: string[] }> {
  const where = options.workspaceId === undefined ? '1 = 1' : 'workspace_id = {workspaceId:String}';
  const onCluster = target.cluster ? ` ON CLUSTER ${target.cluster}` : '';
  return retainedTables.map(({ table, expiresAt }) => {
    const stored = `${target.cluster ? `${table}_local` : table}${onCluster}`;
    return {
      table,
      statements: [
        // The statement's own SETTINGS: the embedded engine would keep a client setting for the session.
        `ALTER TABLE ${stored} UPDATE expires_at = ${expiresAt} WHERE ${where} SETTINGS mutations_sync = ${options.wait ? 2 : 0}`,
        // Parts the UPDATE did not touch keep their TTL; this drops their rows that expired by
        // the passing of time since their last merge.
        ...(options.wait ? [`ALTER TABLE ${stored} MATERIALIZE TTL SETTINGS mutations_sync = 2`] : []),
      ],
    };
  });
}

/** Reloads the dictionary `retention_days` (on a cluster, on every node). */
export const reloadRetentionDays = (target: RetentionTarget) =>
  `SYSTEM RELOAD DICTIONARY retention_days${target.cluster ? ` ON CLUSTER ${target.cluster}` : ''}`;

/**
 * Recomputes `expires_at` of existing rows (one workspace's, or all) from the current
 * settings; the mutation rewrites the parts' TTL, so expired rows are dropped by it. With
 * `wait` the call returns once every table's mutation is done (POST /api/admin/retention/apply);
 * without, the engine runs them in the background (after a change of a setting).
 */
export async function applyRetention(
  clickhouse: ClickHouseClient,
  options: { workspaceId?: string | undefined; wait: boolean; target?: RetentionTarget },
): Promise<string[]> {
  const tables = retentionMutations(options.target ?? {}, options);
  for (const { statements } of tables) {
    for (const query of statements) {
      await clickhouse.command({ query, query_params: options.workspaceId === undefined ? {} : { workspaceId: options.workspaceId } });
    }
  }
  return tables.map((t) => t.table);
}

/**
 * At start: copies the settings with this start's deployment default; when that default
 * changed since the last start, existing rows are brought in step by a background mutation.
 */
export async function startRetention(
  sql: Sql,
  clickhouse: ClickHouseClient,
  deploymentDays: number | null,
  target: RetentionTarget = {},
): Promise<void> {
  const result = await clickhouse.query({
    query: "SELECT days FROM retention_settings_current WHERE workspace_id = '' AND environment = ''",
    format: 'JSONEachRow',
  });
  const [previous] = await result.json<{ days: number }>();
  await syncRetentionSettings(sql, clickhouse, deploymentDays, target);
  if (previous === undefined || Number(previous.days) !== (deploymentDays ?? 0)) await applyRetention(clickhouse, { wait: false, target });
}
