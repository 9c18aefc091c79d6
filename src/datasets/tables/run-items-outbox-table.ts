import type { Sql } from '../../stores/postgres.js';

/**
 * The SQL on `dataset_run_items_outbox` (postgres/0014): what is still to be written to the
 * engine's copy of the run items (clickhouse/0017). An entry is added in the transaction of
 * the change it records, and deleted in the transaction that claimed it once the engine has
 * the rows, so a committed change stays listed until the engine has it.
 */

/** Lists run items written (all of the run's when `itemIds` is null) to be sent to the engine. */
export async function addWrittenEntry(sql: Sql, workspaceId: string, runId: string, itemIds: string[] | null): Promise<void> {
  await sql`insert into dataset_run_items_outbox (workspace_id, run_id, dataset_item_ids) values (${workspaceId}, ${runId}, ${itemIds})`;
}

/**
 * Lists the items of the runs about to be deleted (one run, or every run of a dataset), to be
 * hidden in the engine by tombstones of a version above every version they had. Call it in
 * the transaction that deletes them, before the delete.
 */
export async function addDeletedEntries(sql: Sql, workspaceId: string, runs: { runId: string } | { datasetId: string }): Promise<void> {
  const which = 'runId' in runs ? sql`r.id = ${runs.runId}` : sql`r.dataset_id = ${runs.datasetId}`;
  await sql`
    insert into dataset_run_items_outbox (workspace_id, run_id, dataset_item_ids, deleted_version)
    select ${workspaceId}, r.id, coalesce((select array_agg(i.dataset_item_id) from dataset_run_items i where i.run_id = r.id), '{}'),
      nextval('dataset_run_items_version')
    from dataset_runs r join datasets d on d.id = r.dataset_id
    where d.workspace_id = ${workspaceId} and ${which}`;
}

export interface OutboxEntry {
  id: string;
  workspaceId: string;
  runId: string;
  datasetItemIds: string[] | null;
  deletedVersion: string | null;
}

/** The oldest entries (of one workspace, or any), locked for this transaction; entries another transaction holds are skipped. */
export async function claimEntries(sql: Sql, workspaceId: string | undefined, limit: number): Promise<OutboxEntry[]> {
  return sql<OutboxEntry[]>`
    select id::text, workspace_id as "workspaceId", run_id as "runId", dataset_item_ids as "datasetItemIds",
      deleted_version::text as "deletedVersion"
    from dataset_run_items_outbox
    ${workspaceId === undefined ? sql`` : sql`where workspace_id = ${workspaceId}`}
    order by id
    limit ${limit}
    for update skip locked`;
}

export async function deleteEntries(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length > 0) await sql`delete from dataset_run_items_outbox where id = any(${ids}::bigint[])`;
}

/** Whether an entry of these runs is still to be sent (another flush may hold it): the engine's copy may lag for them. */
export async function hasPendingEntries(sql: Sql, workspaceId: string, runIds: string[]): Promise<boolean> {
  const [row] = await sql<{ pending: boolean }[]>`
    select exists (select 1 from dataset_run_items_outbox where workspace_id = ${workspaceId} and run_id = any(${runIds}::uuid[])) as pending`;
  return row?.pending ?? true;
}
