import type { Sql } from '../../stores/postgres.js';
import type { Item } from '../api/schemas.js';

/**
 * The SQL on `dataset_item_versions` (postgres/0010): every change of an item is a new row,
 * and the row it replaces gets its `valid_to`. The caller holds the dataset's row lock
 * (datasets-table.ts lockDataset) while writing, so the versions of an item never overlap.
 */

interface ItemRow extends ItemVersionToWrite {
  datasetId: string;
  createdAt: Date;
  validFrom: Date;
  validTo: Date | null;
}

const toItem = (row: ItemRow): Item => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  validFrom: row.validFrom.toISOString(),
  validTo: row.validTo?.toISOString() ?? null,
});

const columns = (sql: Sql) => sql`
  item_id as "id", dataset_id as "datasetId", input, expected_output as "expectedOutput", metadata,
  source_trace_id as "sourceTraceId", source_span_id as "sourceSpanId", status,
  created_at as "createdAt", valid_from as "validFrom", valid_to as "validTo"`;

/** The versions in force at `asOf`. */
const inForceAt = (sql: Sql, asOf: Date) => sql`valid_from <= ${asOf} and (valid_to is null or valid_to > ${asOf})`;

export interface ItemVersionToWrite {
  id: string;
  input: unknown;
  expectedOutput: unknown;
  metadata: Record<string, unknown>;
  sourceTraceId: string | null;
  sourceSpanId: string | null;
  status: Item['status'];
}

/**
 * The time of a write: read after the dataset's lock is held, so a later write of the dataset
 * always has a later time than an earlier one (a transaction's `now()` is its start).
 */
export async function writeTime(tx: Sql): Promise<Date> {
  const [row] = await tx<{ now: Date }[]>`select clock_timestamp() as now`;
  return row!.now;
}

/** The current versions of these items (any status). */
export async function selectCurrentItems(tx: Sql, datasetId: string, ids: string[]): Promise<Map<string, Item>> {
  if (ids.length === 0) return new Map();
  const rows = await tx<ItemRow[]>`
    select ${columns(tx)} from dataset_item_versions
    where dataset_id = ${datasetId} and item_id = any(${ids}) and valid_to is null`;
  return new Map(rows.map((row) => [row.id, toItem(row)]));
}

/** Closes the current versions of these items at `at` and writes their new versions from `at`. */
export async function writeItemVersions(tx: Sql, datasetId: string, at: Date, items: ItemVersionToWrite[], createdAt: Map<string, string>) {
  if (items.length === 0) return;
  await tx`
    update dataset_item_versions set valid_to = ${at}
    where dataset_id = ${datasetId} and item_id = any(${items.map((i) => i.id)}) and valid_to is null`;
  const rows = items.map((item) => ({
    dataset_id: datasetId,
    item_id: item.id,
    input: JSON.stringify(item.input),
    expected_output: item.expectedOutput === undefined ? null : JSON.stringify(item.expectedOutput),
    metadata: JSON.stringify(item.metadata),
    source_trace_id: item.sourceTraceId,
    source_span_id: item.sourceSpanId,
    status: item.status,
    created_at: createdAt.get(item.id) ?? at.toISOString(),
    valid_from: at.toISOString(),
  }));
  await tx`
    insert into dataset_item_versions (dataset_id, item_id, input, expected_output, metadata, source_trace_id, source_span_id, status, created_at, valid_from)
    select dataset_id, item_id, input::jsonb, expected_output::jsonb, metadata::jsonb, source_trace_id, source_span_id, status,
      created_at::timestamptz, valid_from::timestamptz
    from jsonb_to_recordset(${tx.json(rows)}::jsonb) as r(dataset_id uuid, item_id text, input text, expected_output text,
      metadata text, source_trace_id text, source_span_id text, status text, created_at text, valid_from text)`;
}

/** One page of the items in force at `asOf`, by id after `afterId`; one more than `limit` says a later page exists. */
export async function selectItemsPage(
  sql: Sql,
  datasetId: string,
  options: { asOf: Date; status: Item['status'] | 'all'; limit: number; afterId: string | undefined },
): Promise<Item[]> {
  const rows = await sql<ItemRow[]>`
    select ${columns(sql)} from dataset_item_versions
    where dataset_id = ${datasetId} and ${inForceAt(sql, options.asOf)}
      ${options.status === 'all' ? sql`` : sql`and status = ${options.status}`}
      ${options.afterId === undefined ? sql`` : sql`and item_id > ${options.afterId}`}
    order by item_id
    limit ${options.limit + 1}`;
  return rows.map(toItem);
}

/** One item as it was at `asOf`. */
export async function selectItemAt(sql: Sql, datasetId: string, itemId: string, asOf: Date): Promise<Item | undefined> {
  const [row] = await sql<ItemRow[]>`
    select ${columns(sql)} from dataset_item_versions
    where dataset_id = ${datasetId} and item_id = ${itemId} and ${inForceAt(sql, asOf)}`;
  return row && toItem(row);
}

/** Every version of an item, oldest first. */
export async function selectItemHistory(sql: Sql, datasetId: string, itemId: string): Promise<Item[]> {
  const rows = await sql<ItemRow[]>`
    select ${columns(sql)} from dataset_item_versions
    where dataset_id = ${datasetId} and item_id = ${itemId} order by valid_from, version_id`;
  return rows.map(toItem);
}
