import type { Sql } from '../../stores/postgres.js';
import { AppError, firstIssuePerPath, issuePath, notFound } from '../../http/wire/errors.js';
import {
  runItemInputSchema,
  type CreateRun,
  type ListRunItemsQuery,
  type Run,
  type RunItemInput,
  type UpdateRun,
  type UpsertRunItemsResult,
} from '../api/run-schemas.js';
import { afterIdOfCursor, encodeItemCursor } from '../model/item-cursor.js';
import { selectDataset } from '../tables/datasets-table.js';
import * as outbox from '../tables/run-items-outbox-table.js';
import * as table from '../tables/runs-table.js';

/** Runs (experiments) of a dataset: CRUD, and their items (one per dataset item, linked to a trace). */

async function requireDataset(sql: Sql, workspaceId: string, datasetId: string) {
  const dataset = await selectDataset(sql, workspaceId, datasetId);
  if (!dataset) throw notFound('Dataset', { id: datasetId });
  return dataset;
}

export async function createRun(sql: Sql, workspaceId: string, datasetId: string, body: CreateRun): Promise<Run> {
  await requireDataset(sql, workspaceId, datasetId);
  const created = await table.insertRun(
    sql,
    datasetId,
    body,
    body.datasetVersion === undefined ? new Date() : new Date(body.datasetVersion),
  );
  if (!created) throw new AppError('CONFLICT', `A run named "${body.name}" exists in this dataset`, { name: body.name });
  return created;
}

export async function listRuns(sql: Sql, workspaceId: string, datasetId: string): Promise<Run[]> {
  await requireDataset(sql, workspaceId, datasetId);
  return table.selectRuns(sql, workspaceId, datasetId);
}

export async function getRun(sql: Sql, workspaceId: string, datasetId: string, runId: string): Promise<Run> {
  const run = await table.selectRun(sql, workspaceId, datasetId, runId);
  if (!run) throw notFound('Dataset run', { datasetId, id: runId });
  return run;
}

export async function updateRun(sql: Sql, workspaceId: string, datasetId: string, runId: string, change: UpdateRun): Promise<Run> {
  const current = await getRun(sql, workspaceId, datasetId, runId);
  await table.updateRun(sql, runId, {
    description: change.description !== undefined ? change.description : current.description,
    metadata: change.metadata ?? current.metadata,
  });
  return getRun(sql, workspaceId, datasetId, runId);
}

export async function deleteRun(sql: Sql, workspaceId: string, datasetId: string, runId: string) {
  await getRun(sql, workspaceId, datasetId, runId);
  await sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    await outbox.addDeletedEntries(tx, workspaceId, { runId });
    await table.deleteRun(tx, runId);
  });
  return { id: runId, deleted: true as const };
}

/**
 * Validates each run item on its own (shape; its dataset item existed at the run's dataset
 * version, whatever its status then or now) and writes the valid ones, answered per index.
 */
export async function upsertRunItems(
  sql: Sql,
  workspaceId: string,
  datasetId: string,
  runId: string,
  items: unknown[],
): Promise<UpsertRunItemsResult> {
  const run = await getRun(sql, workspaceId, datasetId, runId);
  const errors: UpsertRunItemsResult['errors'] = [];
  const parsed: { index: number; item: RunItemInput }[] = [];
  const seen = new Map<string, number>();
  items.forEach((raw, index) => {
    const result = runItemInputSchema.safeParse(raw);
    if (!result.success) {
      for (const issue of firstIssuePerPath(result.error.issues))
        errors.push({ index, path: issuePath(`items.${index}`, issue.path), message: issue.message });
      return;
    }
    const first = seen.get(result.data.datasetItemId);
    if (first !== undefined) {
      errors.push({ index, path: `items.${index}.datasetItemId`, message: `duplicates the dataset item of items.${first}` });
      return;
    }
    seen.set(result.data.datasetItemId, index);
    parsed.push({ index, item: result.data });
  });
  const known = await table.selectItemIdsAt(
    sql,
    datasetId,
    parsed.map((p) => p.item.datasetItemId),
    new Date(run.datasetVersion),
  );
  const valid: RunItemInput[] = [];
  for (const { index, item } of parsed) {
    if (known.has(item.datasetItemId)) valid.push(item);
    else
      errors.push({ index, path: `items.${index}.datasetItemId`, message: "is not an item of the dataset at the run's dataset version" });
  }
  if (valid.length > 0)
    await sql.begin(async (transaction) => {
      const tx = transaction as unknown as Sql;
      await table.upsertRunItems(tx, runId, valid);
      await outbox.addWrittenEntry(
        tx,
        workspaceId,
        runId,
        valid.map((item) => item.datasetItemId),
      );
    });
  errors.sort((a, b) => a.index - b.index);
  return { accepted: valid.length, rejected: items.length - valid.length, errors };
}

export async function listRunItems(sql: Sql, workspaceId: string, datasetId: string, runId: string, query: ListRunItemsQuery) {
  await getRun(sql, workspaceId, datasetId, runId);
  const afterId = afterIdOfCursor(query.cursor);
  const rows = await table.selectRunItemsPage(sql, runId, query.limit, afterId);
  const hasMore = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  return {
    items: page,
    meta: { pagination: { limit: query.limit, hasMore, nextCursor: hasMore ? encodeItemCursor(page.at(-1)!.datasetItemId) : null } },
  };
}
