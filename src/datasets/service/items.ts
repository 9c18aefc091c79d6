import { randomUUID } from 'node:crypto';
import type { Sql } from '../../stores/postgres.js';
import type { SpanContentReader } from '../../contract/span-content.js';
import { firstIssuePerPath, issuePath, notFound, validationError } from '../../http/wire/errors.js';
import {
  itemInputSchema,
  type Item,
  type ItemFromSpan,
  type ItemInput,
  type ListItemsQuery,
  type UpsertItemsResult,
} from '../api/schemas.js';
import { compileJsonSchema, type ValueCheck } from '../../contract/rules/json-schema.js';
import { afterIdOfCursor, encodeItemCursor } from '../model/item-cursor.js';
import { lockDataset, selectDataset } from '../tables/datasets-table.js';
import * as table from '../tables/items-table.js';

/** A dataset's items: batch upsert (each change a new version), pages as of a time, one item, archive. */

const checkOf = (schema: Record<string, unknown> | null): ValueCheck | undefined => {
  if (schema === null) return undefined;
  const compiled = compileJsonSchema(schema);
  return 'check' in compiled ? compiled.check : undefined;
};

/**
 * Validates each item on its own (shape, then the dataset's schemas), writes the valid ones as
 * new versions in one transaction holding the dataset's lock, and answers per index like trace
 * ingest: one bad item never fails another. Fields left out of a re-sent item are null (or
 * `{}`, `active`): a version is the whole item as sent.
 */
export async function upsertItems(sql: Sql, workspaceId: string, datasetId: string, items: unknown[]): Promise<UpsertItemsResult> {
  return await sql.begin(async (transaction): Promise<UpsertItemsResult> => {
    const tx = transaction as unknown as Sql;
    const dataset = await lockDataset(tx, workspaceId, datasetId);
    if (!dataset) throw notFound('Dataset', { id: datasetId });
    const checkInput = checkOf(dataset.inputSchema);
    const checkExpected = checkOf(dataset.expectedOutputSchema);

    const errors: UpsertItemsResult['errors'] = [];
    const ids: (string | null)[] = items.map(() => null);
    const valid: { index: number; item: ItemInput & { id: string } }[] = [];
    const seen = new Map<string, number>();
    items.forEach((raw, index) => {
      const sentId = typeof (raw as { id?: unknown } | null)?.id === 'string' ? (raw as { id: string }).id : null;
      const parsed = itemInputSchema.safeParse(raw);
      if (!parsed.success) {
        for (const issue of firstIssuePerPath(parsed.error.issues))
          errors.push({ index, id: sentId, path: issuePath(`items.${index}`, issue.path), message: issue.message });
        return;
      }
      const item = parsed.data;
      const problems = [
        ...(checkInput?.(item.input) ?? []).map((p) => ({ ...p, field: 'input' })),
        ...(checkExpected && item.expectedOutput !== undefined && item.expectedOutput !== null
          ? checkExpected(item.expectedOutput).map((p) => ({ ...p, field: 'expectedOutput' }))
          : []),
      ];
      if (problems.length > 0) {
        for (const p of problems)
          errors.push({ index, id: sentId, path: [`items.${index}`, p.field, ...p.path].join('.'), message: p.message });
        return;
      }
      if (item.id !== undefined) {
        const first = seen.get(item.id);
        if (first !== undefined) {
          errors.push({ index, id: item.id, path: `items.${index}.id`, message: `duplicates the id of items.${first}` });
          return;
        }
        seen.set(item.id, index);
      }
      valid.push({ index, item: { ...item, id: item.id ?? randomUUID() } });
    });

    const at = await table.writeTime(tx);
    const current = await table.selectCurrentItems(
      tx,
      datasetId,
      valid.map((v) => v.item.id),
    );
    await table.writeItemVersions(
      tx,
      datasetId,
      at,
      valid.map(({ item }) => ({
        id: item.id,
        input: item.input,
        expectedOutput: item.expectedOutput ?? null,
        metadata: item.metadata ?? {},
        sourceTraceId: item.sourceTraceId ?? null,
        sourceSpanId: item.sourceSpanId ?? null,
        status: item.status ?? 'active',
      })),
      new Map([...current].map(([id, item]) => [id, item.createdAt])),
    );
    for (const { index, item } of valid) ids[index] = item.id;
    errors.sort((a, b) => a.index - b.index);
    return { accepted: valid.length, rejected: items.length - valid.length, ids, errors, version: at.toISOString() };
  });
}

async function requireDataset(sql: Sql, workspaceId: string, datasetId: string) {
  const dataset = await selectDataset(sql, workspaceId, datasetId);
  if (!dataset) throw notFound('Dataset', { id: datasetId });
  return dataset;
}

export async function listItems(sql: Sql, workspaceId: string, datasetId: string, query: ListItemsQuery) {
  await requireDataset(sql, workspaceId, datasetId);
  const afterId = afterIdOfCursor(query.cursor);
  const asOf = query.asOf === undefined ? new Date() : new Date(query.asOf);
  const rows = await table.selectItemsPage(sql, datasetId, { asOf, status: query.status, limit: query.limit, afterId });
  const hasMore = rows.length > query.limit;
  const items = rows.slice(0, query.limit);
  return {
    items,
    meta: {
      pagination: { limit: query.limit, hasMore, nextCursor: hasMore ? encodeItemCursor(items.at(-1)!.id) : null },
      asOf: asOf.toISOString(),
    },
  };
}

export async function getItem(sql: Sql, workspaceId: string, datasetId: string, itemId: string, asOf: string | undefined): Promise<Item> {
  await requireDataset(sql, workspaceId, datasetId);
  const item = await table.selectItemAt(sql, datasetId, itemId, asOf === undefined ? new Date() : new Date(asOf));
  if (!item) throw notFound('Dataset item', { datasetId, id: itemId });
  return item;
}

export async function getItemHistory(sql: Sql, workspaceId: string, datasetId: string, itemId: string): Promise<Item[]> {
  await requireDataset(sql, workspaceId, datasetId);
  const versions = await table.selectItemHistory(sql, datasetId, itemId);
  if (versions.length === 0) throw notFound('Dataset item', { datasetId, id: itemId });
  return versions;
}

/** Archives an item (or makes it active again): a new version with the same content and the new status. */
export async function setItemStatus(
  sql: Sql,
  workspaceId: string,
  datasetId: string,
  itemId: string,
  status: Item['status'],
): Promise<Item> {
  return await sql.begin(async (transaction): Promise<Item> => {
    const tx = transaction as unknown as Sql;
    if (!(await lockDataset(tx, workspaceId, datasetId))) throw notFound('Dataset', { id: datasetId });
    const current = (await table.selectCurrentItems(tx, datasetId, [itemId])).get(itemId);
    if (!current) throw notFound('Dataset item', { datasetId, id: itemId });
    if (current.status === status) return current;
    const at = await table.writeTime(tx);
    await table.writeItemVersions(tx, datasetId, at, [{ ...current, status }], new Map([[itemId, current.createdAt]]));
    return (await table.selectCurrentItems(tx, datasetId, [itemId])).get(itemId)!;
  });
}

/**
 * Adds a stored span to a dataset: its input becomes the item's input, its output the expected
 * output (unless one is given), and the item names the span it came from. Checked against the
 * dataset's schemas like any item (400 naming the path).
 */
export async function addItemFromSpan(
  sql: Sql,
  spans: SpanContentReader,
  workspaceId: string,
  datasetId: string,
  body: ItemFromSpan,
): Promise<Item> {
  await requireDataset(sql, workspaceId, datasetId);
  const span = await spans(workspaceId, body.traceId, body.spanId);
  if (!span) throw notFound('Span', { traceId: body.traceId, spanId: body.spanId });
  const item = {
    ...(body.id === undefined ? {} : { id: body.id }),
    input: span.input ?? null,
    expectedOutput: body.expectedOutput !== undefined ? body.expectedOutput : (span.output ?? null),
    metadata: body.metadata ?? {},
    sourceTraceId: body.traceId,
    sourceSpanId: body.spanId,
  };
  const result = await upsertItems(sql, workspaceId, datasetId, [item]);
  if (result.accepted === 0) {
    const issues = result.errors.map((e) => ({ path: e.path.replace(/^items\.0\./, 'span.'), message: e.message }));
    throw validationError(`The span does not fit the dataset: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  return getItem(sql, workspaceId, datasetId, result.ids[0]!, undefined);
}
