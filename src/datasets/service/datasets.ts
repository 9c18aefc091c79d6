import type { Sql } from '../../stores/postgres.js';
import { AppError, notFound, validationError } from '../../http/wire/errors.js';
import type { CreateDataset, Dataset, UpdateDataset } from '../api/schemas.js';
import { compileJsonSchema } from '../../contract/rules/json-schema.js';
import * as table from '../tables/datasets-table.js';
import { addDeletedEntries } from '../tables/run-items-outbox-table.js';

/** CRUD of datasets; a name is unique in its workspace (409 on a second). */

/** Refuses a dataset whose item schemas are no JSON Schemas, naming the path inside each. */
function checkSchemas(body: Pick<CreateDataset, 'inputSchema' | 'expectedOutputSchema'>) {
  const issues: { path: string; message: string }[] = [];
  for (const field of ['inputSchema', 'expectedOutputSchema'] as const) {
    const schema = body[field];
    if (schema == null) continue;
    const compiled = compileJsonSchema(schema);
    if ('problems' in compiled)
      for (const problem of compiled.problems) issues.push({ path: ['body', field, ...problem.path].join('.'), message: problem.message });
  }
  if (issues.length > 0) throw validationError(`Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}

const nameTaken = (name: string) => new AppError('CONFLICT', `A dataset named "${name}" exists in this workspace`, { name });

export async function createDataset(sql: Sql, workspaceId: string, body: CreateDataset): Promise<Dataset> {
  checkSchemas(body);
  const created = await table.insertDataset(sql, workspaceId, body);
  if (!created) throw nameTaken(body.name);
  return created;
}

export const listDatasets = (sql: Sql, workspaceId: string) => table.selectDatasets(sql, workspaceId);

export async function getDataset(sql: Sql, workspaceId: string, id: string): Promise<Dataset> {
  const dataset = await table.selectDataset(sql, workspaceId, id);
  if (!dataset) throw notFound('Dataset', { id });
  return dataset;
}

/** The change merged with the stored dataset. New schemas apply to items written from now on. */
export async function updateDataset(sql: Sql, workspaceId: string, id: string, change: UpdateDataset): Promise<Dataset> {
  checkSchemas(change);
  const current = await getDataset(sql, workspaceId, id);
  const merged = {
    name: change.name ?? current.name,
    description: change.description !== undefined ? change.description : current.description,
    metadata: change.metadata ?? current.metadata,
    inputSchema: change.inputSchema !== undefined ? change.inputSchema : current.inputSchema,
    expectedOutputSchema: change.expectedOutputSchema !== undefined ? change.expectedOutputSchema : current.expectedOutputSchema,
  };
  const updated = await table.updateDataset(sql, workspaceId, id, merged);
  if (updated === 'conflict') throw nameTaken(merged.name);
  if (!updated) throw notFound('Dataset', { id });
  return updated;
}

/** Deletes the dataset, its items and runs; the engine's copy of its run items is hidden by the outbox's next flush. */
export async function deleteDataset(sql: Sql, workspaceId: string, id: string) {
  const deleted = await sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    await addDeletedEntries(tx, workspaceId, { datasetId: id });
    return table.deleteDataset(tx, workspaceId, id);
  });
  if (!deleted) throw notFound('Dataset', { id });
  return { id, deleted: true as const };
}
