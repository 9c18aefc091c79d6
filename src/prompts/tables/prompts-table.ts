import type postgres from 'postgres';
import type { Sql } from '../../stores/postgres.js';
import type { Prompt } from '../model/schemas.js';
import type { Version } from '../model/version.js';

/** A connection or a transaction: reads run on either, writes inside `sql.begin`. */
export type Db = Sql | postgres.TransactionSql;

type PromptRow = Omit<Prompt, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };

const toPrompt = (row: PromptRow): Prompt => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const promptColumns = (db: Db) => db`
  id, name, version, prompt_group_id as "promptGroupId", is_latest as "isLatest",
  system_prompt as "systemPrompt", human_prompt as "humanPrompt", raw_prompt as "rawPrompt",
  description, metadata, output_schema as "outputSchema", workspace_id as "workspaceId",
  created_at as "createdAt", updated_at as "updatedAt",
  -- "latest" is the flag, shown among the labels; the stored labels follow in byte order.
  (case when is_latest then array['latest'] else array[]::text[] end)
    || coalesce((select array_agg(l.label order by l.label collate "C") from prompt_labels l where l.prompt_id = prompts.id), array[]::text[])
    as labels`;

/** The content a version carries; everything else is its identity. */
export interface PromptContent {
  systemPrompt: string;
  humanPrompt: string | null;
  rawPrompt: string | null;
  description: string;
  metadata: Record<string, unknown>;
  outputSchema: Record<string, unknown> | null;
}

export function pgErrorCode(error: unknown): string | undefined {
  return (error as { code?: string }).code;
}

export async function selectPrompt(db: Db, workspaceId: string, id: number): Promise<Prompt | undefined> {
  const [row] = await db<PromptRow[]>`
    select ${promptColumns(db)} from prompts where id = ${id} and workspace_id = ${workspaceId}`;
  return row ? toPrompt(row) : undefined;
}

export async function insertGroup(db: Db, workspaceId: string, name: string): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    insert into prompt_groups (workspace_id, name) values (${workspaceId}, ${name}) returning id`;
  return row!.id;
}

/**
 * Locks the prompt's group row until the transaction ends: writers of one prompt take turns,
 * so "greater than every version" and the latest flag are decided on a stable set of rows.
 */
export async function lockGroup(db: Db, workspaceId: string, groupId: string): Promise<boolean> {
  const rows = await db`select id from prompt_groups where id = ${groupId} and workspace_id = ${workspaceId} for update`;
  return rows.length === 1;
}

/** The highest version of a group by semver, as stored in the integer key. */
export async function selectHighestVersion(db: Db, groupId: string): Promise<string | undefined> {
  const [row] = await db<{ version: string }[]>`
    select version from prompts where prompt_group_id = ${groupId}
    order by version_major desc, version_minor desc, version_patch desc limit 1`;
  return row?.version;
}

/** Unflags the group's latest version; it must run before a new latest is inserted (the unique index is not deferrable). */
export async function clearLatest(db: Db, groupId: string): Promise<void> {
  await db`update prompts set is_latest = false, updated_at = now() where prompt_group_id = ${groupId} and is_latest`;
}

export async function insertVersion(
  db: Db,
  record: { workspaceId: string; groupId: string; name: string; version: Version; isLatest: boolean; content: PromptContent },
): Promise<Prompt> {
  const { content, version } = record;
  const [row] = await db<PromptRow[]>`
    insert into prompts (
      workspace_id, prompt_group_id, name, version, version_major, version_minor, version_patch, is_latest,
      system_prompt, human_prompt, raw_prompt, description, metadata, output_schema)
    values (
      ${record.workspaceId}, ${record.groupId}, ${record.name}, ${version.text},
      ${version.major}, ${version.minor}, ${version.patch}, ${record.isLatest},
      ${content.systemPrompt}, ${content.humanPrompt}, ${content.rawPrompt}, ${content.description},
      ${db.json(content.metadata as postgres.JSONValue)},
      ${content.outputSchema === null ? null : db.json(content.outputSchema as postgres.JSONValue)})
    returning ${promptColumns(db)}`;
  return toPrompt(row!);
}

type PromptFilter = { name?: string | undefined; isLatest?: boolean | undefined };

const whereFilter = (db: Db, workspaceId: string, filter: PromptFilter) => db`
  where workspace_id = ${workspaceId}
    ${filter.name === undefined ? db`` : db`and name = ${filter.name}`}
    ${filter.isLatest === undefined ? db`` : db`and is_latest = ${filter.isLatest}`}`;

export async function selectPrompts(
  db: Db,
  workspaceId: string,
  filter: PromptFilter & { limit: number; offset: number },
): Promise<{ prompts: Prompt[]; total: number }> {
  const rows = await db<(PromptRow & { total: string })[]>`
    select ${promptColumns(db)}, count(*) over () as total
    from prompts ${whereFilter(db, workspaceId, filter)}
    -- Byte order for names, so the order is the same whatever the database's collation.
    order by name collate "C", version_major desc, version_minor desc, version_patch desc, id desc
    limit ${filter.limit} offset ${filter.offset}`;
  const total = rows[0] ? Number(rows[0].total) : await countPrompts(db, workspaceId, filter);
  return { prompts: rows.map(({ total: _total, ...row }) => toPrompt(row)), total };
}

/** Only needed when the page is past the end: the window count rides on the rows otherwise. */
async function countPrompts(db: Db, workspaceId: string, filter: PromptFilter) {
  const [row] = await db<{ total: string }[]>`select count(*) as total from prompts ${whereFilter(db, workspaceId, filter)}`;
  return Number(row!.total);
}

export async function deleteGroup(db: Db, workspaceId: string, groupId: string): Promise<number> {
  const [row] = await db<{ count: string }[]>`
    with removed as (delete from prompt_groups where id = ${groupId} and workspace_id = ${workspaceId} returning id)
    select (select count(*) from prompts where prompt_group_id in (select id from removed)) as count`;
  return Number(row!.count);
}
