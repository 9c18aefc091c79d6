import type { Sql } from '../../stores/postgres.js';
import type { CreateDataset, Dataset } from '../api/schemas.js';

/** The SQL on `datasets` (postgres/0010): one workspace's datasets, by id. */

interface DatasetRow {
  id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  inputSchema: Record<string, unknown> | null;
  expectedOutputSchema: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
}

const toDataset = (row: DatasetRow): Dataset => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const columns = (sql: Sql) => sql`
  id, name, description, metadata, input_schema as "inputSchema", expected_output_schema as "expectedOutputSchema",
  created_at as "createdAt", updated_at as "updatedAt"`;

const jsonOrNull = (sql: Sql, value: Record<string, unknown> | null | undefined) => (value == null ? null : sql.json(value as never));

/** The new dataset, or undefined when the workspace has one of that name. */
export async function insertDataset(sql: Sql, workspaceId: string, body: CreateDataset): Promise<Dataset | undefined> {
  const [row] = await sql<DatasetRow[]>`
    insert into datasets (workspace_id, name, description, metadata, input_schema, expected_output_schema)
    values (${workspaceId}, ${body.name}, ${body.description ?? null}, ${sql.json((body.metadata ?? {}) as never)},
      ${jsonOrNull(sql, body.inputSchema)}, ${jsonOrNull(sql, body.expectedOutputSchema)})
    on conflict (workspace_id, name) do nothing
    returning ${columns(sql)}`;
  return row && toDataset(row);
}

export async function selectDatasets(sql: Sql, workspaceId: string): Promise<Dataset[]> {
  const rows = await sql<DatasetRow[]>`select ${columns(sql)} from datasets where workspace_id = ${workspaceId} order by name`;
  return rows.map(toDataset);
}

export async function selectDataset(sql: Sql, workspaceId: string, id: string): Promise<Dataset | undefined> {
  const [row] = await sql<DatasetRow[]>`select ${columns(sql)} from datasets where workspace_id = ${workspaceId} and id = ${id}`;
  return row && toDataset(row);
}

/**
 * Locks the dataset's row for the rest of the transaction (writes to its items are serialized,
 * so versions never overlap) and answers it, or undefined when the workspace has no such dataset.
 */
export async function lockDataset(sql: Sql, workspaceId: string, id: string): Promise<Dataset | undefined> {
  const [row] = await sql<DatasetRow[]>`
    select ${columns(sql)} from datasets where workspace_id = ${workspaceId} and id = ${id} for update`;
  return row && toDataset(row);
}

/** Writes the merged fields; undefined when the dataset is gone, 'conflict' when the new name is taken. */
export async function updateDataset(
  sql: Sql,
  workspaceId: string,
  id: string,
  merged: Omit<Dataset, 'id' | 'createdAt' | 'updatedAt'>,
): Promise<Dataset | undefined | 'conflict'> {
  const [taken] = await sql`select 1 from datasets where workspace_id = ${workspaceId} and name = ${merged.name} and id <> ${id}`;
  if (taken) return 'conflict';
  const [row] = await sql<DatasetRow[]>`
    update datasets set name = ${merged.name}, description = ${merged.description}, metadata = ${sql.json(merged.metadata as never)},
      input_schema = ${jsonOrNull(sql, merged.inputSchema)}, expected_output_schema = ${jsonOrNull(sql, merged.expectedOutputSchema)},
      updated_at = now()
    where workspace_id = ${workspaceId} and id = ${id}
    returning ${columns(sql)}`;
  return row && toDataset(row);
}

export async function deleteDataset(sql: Sql, workspaceId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from datasets where workspace_id = ${workspaceId} and id = ${id} returning id`;
  return rows.length > 0;
}
