import type { Sql } from '../../stores/postgres.js';
import type { CreateRun, Run, RunItem, RunItemInput, UpdateRun } from '../api/run-schemas.js';

/** The SQL on `dataset_runs` and `dataset_run_items` (postgres/0010); a run is reached through its dataset's workspace. */

interface RunRow {
  id: string;
  datasetId: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  datasetVersion: Date;
  itemCount: number;
  createdAt: Date;
  updatedAt: Date;
}

const toRun = (row: RunRow): Run => ({
  ...row,
  datasetVersion: row.datasetVersion.toISOString(),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const select = (sql: Sql) => sql`
  select r.id, r.dataset_id as "datasetId", r.name, r.description, r.metadata, r.dataset_version as "datasetVersion",
    (select count(*)::int from dataset_run_items i where i.run_id = r.id) as "itemCount",
    r.created_at as "createdAt", r.updated_at as "updatedAt"
  from dataset_runs r join datasets d on d.id = r.dataset_id`;

/** The new run, or undefined when the dataset has a run of that name. */
export async function insertRun(sql: Sql, datasetId: string, body: CreateRun, datasetVersion: Date): Promise<Run | undefined> {
  const [row] = await sql<{ id: string }[]>`
    insert into dataset_runs (dataset_id, name, description, metadata, dataset_version)
    values (${datasetId}, ${body.name}, ${body.description ?? null}, ${sql.json((body.metadata ?? {}) as never)}, ${datasetVersion})
    on conflict (dataset_id, name) do nothing
    returning id`;
  if (!row) return undefined;
  const [run] = await sql<RunRow[]>`${select(sql)} where r.id = ${row.id}`;
  return run && toRun(run);
}

export async function selectRuns(sql: Sql, workspaceId: string, datasetId: string): Promise<Run[]> {
  const rows = await sql<RunRow[]>`
    ${select(sql)} where d.workspace_id = ${workspaceId} and r.dataset_id = ${datasetId} order by r.created_at desc, r.name`;
  return rows.map(toRun);
}

export async function selectRun(sql: Sql, workspaceId: string, datasetId: string, runId: string): Promise<Run | undefined> {
  const [row] = await sql<RunRow[]>`
    ${select(sql)} where d.workspace_id = ${workspaceId} and r.dataset_id = ${datasetId} and r.id = ${runId}`;
  return row && toRun(row);
}

export async function updateRun(sql: Sql, runId: string, merged: Required<{ [K in keyof UpdateRun]: Exclude<UpdateRun[K], undefined> }>) {
  await sql`
    update dataset_runs set description = ${merged.description}, metadata = ${sql.json(merged.metadata as never)}, updated_at = now()
    where id = ${runId}`;
}

export async function deleteRun(sql: Sql, runId: string): Promise<void> {
  await sql`delete from dataset_runs where id = ${runId}`;
}

/** Which of these items the dataset had at `asOf` (any status). */
export async function selectItemIdsAt(sql: Sql, datasetId: string, ids: string[], asOf: Date): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await sql<{ id: string }[]>`
    select item_id as id from dataset_item_versions
    where dataset_id = ${datasetId} and item_id = any(${ids}) and valid_from <= ${asOf} and (valid_to is null or valid_to > ${asOf})`;
  return new Set(rows.map((r) => r.id));
}

/** Writes run items, one per dataset item: a re-sent one replaces it (keeping its creation time) under a new version. */
export async function upsertRunItems(sql: Sql, runId: string, items: RunItemInput[]): Promise<void> {
  if (items.length === 0) return;
  const rows = items.map((item) => ({
    dataset_item_id: item.datasetItemId,
    trace_id: item.traceId,
    span_id: item.spanId ?? null,
    output: item.output === undefined ? null : JSON.stringify(item.output),
    error: item.error ?? null,
  }));
  await sql`
    insert into dataset_run_items (run_id, dataset_item_id, trace_id, span_id, output, error)
    select ${runId}, dataset_item_id, trace_id, span_id, output::jsonb, error
    from jsonb_to_recordset(${sql.json(rows)}::jsonb) as r(dataset_item_id text, trace_id text, span_id text, output text, error text)
    on conflict (run_id, dataset_item_id) do update set trace_id = excluded.trace_id, span_id = excluded.span_id,
      output = excluded.output, error = excluded.error, updated_at = now(), version = nextval('dataset_run_items_version')`;
}

interface RunItemRow {
  datasetItemId: string;
  traceId: string;
  spanId: string | null;
  output: unknown;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One page of a run's items by dataset item id after `afterId`; one more than `limit` says a later page exists. */
export async function selectRunItemsPage(sql: Sql, runId: string, limit: number, afterId: string | undefined): Promise<RunItem[]> {
  const rows = await sql<RunItemRow[]>`
    select dataset_item_id as "datasetItemId", trace_id as "traceId", span_id as "spanId", output, error,
      created_at as "createdAt", updated_at as "updatedAt"
    from dataset_run_items
    where run_id = ${runId} ${afterId === undefined ? sql`` : sql`and dataset_item_id > ${afterId}`}
    order by dataset_item_id
    limit ${limit + 1}`;
  return rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() }));
}

/** What a run's figures need of a run item: its trace and error, not its output (read for a page only). */
export type RunItemFacts = Pick<RunItem, 'datasetItemId' | 'traceId' | 'spanId' | 'error'>;

/** Every item of a run without its output, by dataset item id (a run's figures are over all of them). */
export async function selectAllRunItemFacts(sql: Sql, runId: string): Promise<RunItemFacts[]> {
  return sql<RunItemFacts[]>`
    select dataset_item_id as "datasetItemId", trace_id as "traceId", span_id as "spanId", error
    from dataset_run_items
    where run_id = ${runId}
    order by dataset_item_id`;
}

/** The items of runs among `datasetItemIds` (a page), without their output. */
export async function selectRunItemFactsOf(sql: Sql, runIds: string[], datasetItemIds: string[]) {
  if (datasetItemIds.length === 0) return [];
  return sql<(RunItemFacts & { runId: string })[]>`
    select run_id as "runId", dataset_item_id as "datasetItemId", trace_id as "traceId", span_id as "spanId", error
    from dataset_run_items
    where run_id = any(${runIds}::uuid[]) and dataset_item_id = any(${datasetItemIds})`;
}

/** The outputs of these runs' items among `datasetItemIds` (a page), keyed by run id and dataset item id. */
export async function selectRunItemOutputs(sql: Sql, runIds: string[], datasetItemIds: string[]): Promise<Map<string, unknown>> {
  if (datasetItemIds.length === 0) return new Map();
  const rows = await sql<{ runId: string; datasetItemId: string; output: unknown }[]>`
    select run_id as "runId", dataset_item_id as "datasetItemId", output
    from dataset_run_items
    where run_id = any(${runIds}::uuid[]) and dataset_item_id = any(${datasetItemIds})`;
  return new Map(rows.map((r) => [`${r.runId} ${r.datasetItemId}`, r.output]));
}

/** One page of the dataset item ids any of the runs has, after `afterId`, in code unit order; one more than `limit` says a later page exists. */
export async function selectComparedItemIds(sql: Sql, runIds: string[], limit: number, afterId: string | undefined): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select distinct dataset_item_id collate "C" as id
    from dataset_run_items
    where run_id = any(${runIds}::uuid[]) ${afterId === undefined ? sql`` : sql`and dataset_item_id collate "C" > ${afterId}`}
    order by 1
    limit ${limit + 1}`;
  return rows.map((r) => r.id);
}

export interface MirroredRunItemRow {
  datasetId: string;
  runId: string;
  runName: string;
  datasetItemId: string;
  traceId: string;
  spanId: string | null;
  /** JSON text, null when none. */
  output: string | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  version: string;
}

/** The current rows of a run's items (those named, or all), with what the engine's copy holds of the run. */
export async function selectItemsToMirror(sql: Sql, runId: string, itemIds: string[] | null): Promise<MirroredRunItemRow[]> {
  return sql<MirroredRunItemRow[]>`
    select r.dataset_id as "datasetId", r.id as "runId", r.name as "runName", i.dataset_item_id as "datasetItemId",
      i.trace_id as "traceId", i.span_id as "spanId", i.output::text as output, i.error,
      i.created_at as "createdAt", i.updated_at as "updatedAt", i.version::text as version
    from dataset_run_items i join dataset_runs r on r.id = i.run_id
    where i.run_id = ${runId} ${itemIds === null ? sql`` : sql`and i.dataset_item_id = any(${itemIds})`}`;
}

interface FoundRunItemRow {
  runId: string;
  datasetItemId: string;
  traceId: string;
  /** ISO with the microseconds, so a walk resumes exactly after an item. */
  createdAt: string;
}

const exactTime = (sql: Sql) => sql`to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The workspace's run items recorded in a window (of one dataset's runs, or all), oldest first. */
export async function selectRunItemsRecorded(
  sql: Sql,
  workspaceId: string,
  window: {
    datasetId?: string | undefined;
    after: Date;
    before?: Date | undefined;
    afterItem?: { createdAt: string; runId: string; datasetItemId: string } | undefined;
  },
  limit: number,
) {
  return sql<FoundRunItemRow[]>`
    select i.run_id as "runId", i.dataset_item_id as "datasetItemId", i.trace_id as "traceId", ${exactTime(sql)} as "createdAt"
    from dataset_run_items i join dataset_runs r on r.id = i.run_id join datasets d on d.id = r.dataset_id
    where d.workspace_id = ${workspaceId} and i.created_at > ${window.after}
      ${window.before === undefined ? sql`` : sql`and i.created_at < ${window.before}`}
      ${window.datasetId === undefined ? sql`` : sql`and r.dataset_id = ${window.datasetId}`}
      ${
        window.afterItem === undefined
          ? sql``
          : sql`and (i.created_at, i.run_id, i.dataset_item_id) > (${window.afterItem.createdAt}::timestamptz, ${window.afterItem.runId}::uuid, ${window.afterItem.datasetItemId})`
      }
    order by i.created_at, i.run_id, i.dataset_item_id
    limit ${limit}`;
}

/** Every item of one run of the workspace, by dataset item id; undefined when the workspace has no such run. */
export async function selectItemsOfRun(sql: Sql, workspaceId: string, runId: string) {
  const [run] = await sql`
    select r.id from dataset_runs r join datasets d on d.id = r.dataset_id where d.workspace_id = ${workspaceId} and r.id = ${runId}`;
  if (!run) return undefined;
  return sql<FoundRunItemRow[]>`
    select i.run_id as "runId", i.dataset_item_id as "datasetItemId", i.trace_id as "traceId", ${exactTime(sql)} as "createdAt"
    from dataset_run_items i where i.run_id = ${runId}
    order by i.dataset_item_id`;
}

/** A run item with its dataset item as the run saw it (at the run's dataset version). */
export async function selectRunItemContent(sql: Sql, workspaceId: string, runId: string, datasetItemId: string) {
  const [row] = await sql<{ input: unknown; expectedOutput: unknown; output: unknown; metadata: Record<string, unknown> }[]>`
    select v.input, v.expected_output as "expectedOutput", i.output, v.metadata
    from dataset_run_items i
      join dataset_runs r on r.id = i.run_id
      join datasets d on d.id = r.dataset_id
      join dataset_item_versions v on v.dataset_id = r.dataset_id and v.item_id = i.dataset_item_id
        and v.valid_from <= r.dataset_version and (v.valid_to is null or v.valid_to > r.dataset_version)
    where d.workspace_id = ${workspaceId} and i.run_id = ${runId} and i.dataset_item_id = ${datasetItemId}`;
  return row;
}
