import type postgres from 'postgres';
import type { Sql } from '../../stores/postgres.js';
import { AppError, notFound } from '../../http/wire/errors.js';
import type { LabelHistory, LabelMove, MovedBy, ResolveQuery } from '../model/label-schemas.js';
import type { Prompt } from '../model/schemas.js';
import * as store from '../tables/prompts-table.js';
import { enqueueEvent } from '../tables/webhook-outbox-table.js';

type Tx = postgres.TransactionSql;

const promptNotFound = (id: number) => notFound('Prompt', { id });

/**
 * Points `label` at `prompt` (a version already read in this transaction, its group locked):
 * the one holder is replaced in place, the move is recorded and announced. Moving a label to
 * the version that holds it changes nothing and records nothing.
 */
export async function setLabelInTx(tx: Tx, prompt: Prompt, label: string, movedBy: MovedBy): Promise<boolean> {
  const [current] = await tx<{ promptId: number; version: string }[]>`
    select l.prompt_id as "promptId", p.version from prompt_labels l join prompts p on p.id = l.prompt_id
    where l.prompt_group_id = ${prompt.promptGroupId} and l.label = ${label}`;
  if (current?.promptId === prompt.id) return false;
  // The primary key (group, label) is the guarantee: whatever runs concurrently, one row holds it.
  await tx`
    insert into prompt_labels (prompt_group_id, label, prompt_id) values (${prompt.promptGroupId}, ${label}, ${prompt.id})
    on conflict (prompt_group_id, label) do update set prompt_id = excluded.prompt_id, moved_at = now()`;
  await recordMove(tx, prompt, label, current ?? null, { promptId: prompt.id, version: prompt.version }, movedBy);
  return true;
}

type VersionRef = { promptId: number; version: string } | null;

async function recordMove(tx: Tx, prompt: Prompt, label: string, from: VersionRef, to: VersionRef, movedBy: MovedBy) {
  await tx`
    insert into prompt_label_moves (
      prompt_group_id, label, from_prompt_id, from_version, to_prompt_id, to_version, moved_by_key_id, moved_by_user_id)
    values (
      ${prompt.promptGroupId}, ${label}, ${from?.promptId ?? null}, ${from?.version ?? null},
      ${to?.promptId ?? null}, ${to?.version ?? null}, ${movedBy.apiKeyId}, ${movedBy.userId})`;
  await enqueueEvent(tx, prompt.workspaceId, 'prompt.label.moved', {
    name: prompt.name,
    promptGroupId: prompt.promptGroupId,
    label,
    from,
    to,
    movedBy,
  });
}

/** Reads version `id` and locks its prompt for the rest of the transaction (writers of one prompt take turns). */
async function lockedVersion(tx: Tx, workspaceId: string, id: number): Promise<Prompt> {
  const prompt = await store.selectPrompt(tx, workspaceId, id);
  if (!prompt || !(await store.lockGroup(tx, workspaceId, prompt.promptGroupId))) throw promptNotFound(id);
  return prompt;
}

/** A change of one label on version `id`, as the PUT and DELETE of /:id/labels/:label make it. */
export type LabelChange = (sql: Sql, workspaceId: string, id: number, label: string, movedBy: MovedBy) => Promise<Prompt>;

/** Runs `change` in one transaction with the prompt of version `id` locked; answers the version as it is after. */
async function inLockedVersion(
  sql: Sql,
  workspaceId: string,
  id: number,
  change: (tx: Tx, prompt: Prompt) => Promise<void>,
): Promise<Prompt> {
  return await sql.begin(async (tx) => {
    const prompt = await lockedVersion(tx, workspaceId, id);
    await change(tx, prompt);
    return (await store.selectPrompt(tx, workspaceId, id))!;
  });
}

/** PUT /:id/labels/:label: the label moves to version `id` from wherever it was, in one transaction. */
export const moveLabel: LabelChange = (sql, workspaceId, id, label, movedBy) =>
  inLockedVersion(sql, workspaceId, id, async (tx, prompt) => {
    await setLabelInTx(tx, prompt, label, movedBy);
  });

/** DELETE /:id/labels/:label: 404 when version `id` does not hold the label. */
export const removeLabel: LabelChange = (sql, workspaceId, id, label, movedBy) =>
  inLockedVersion(sql, workspaceId, id, async (tx, prompt) => {
    const removed = await tx`delete from prompt_labels where prompt_id = ${id} and label = ${label} returning label`;
    if (removed.length === 0) throw notFound('Label', { id, label });
    await recordMove(tx, prompt, label, { promptId: prompt.id, version: prompt.version }, null, movedBy);
  });

/**
 * GET /api/prompt/resolve: the one record a label, a version or neither (the latest) names.
 * Each branch is a lookup by a unique index: (workspace, name) of the groups then
 * (group, label) of the labels, (workspace, name, version), or the partial latest index.
 */
export async function resolvePrompt(sql: Sql, workspaceId: string, query: ResolveQuery): Promise<Prompt> {
  let id: number | undefined;
  if (query.label !== undefined && query.label !== 'latest') {
    const [row] = await sql<{ id: number }[]>`
      select l.prompt_id as id from prompt_groups g join prompt_labels l on l.prompt_group_id = g.id and l.label = ${query.label}
      where g.workspace_id = ${workspaceId} and g.name = ${query.name}`;
    id = row?.id;
  } else if (query.version !== undefined) {
    const [row] = await sql<{ id: number }[]>`
      select id from prompts where workspace_id = ${workspaceId} and name = ${query.name} and version = ${query.version}`;
    id = row?.id;
  } else {
    const [row] = await sql<{ id: number }[]>`
      select id from prompts where workspace_id = ${workspaceId} and name = ${query.name} and is_latest`;
    id = row?.id;
  }
  const prompt = id === undefined ? undefined : await store.selectPrompt(sql, workspaceId, id);
  if (!prompt) {
    const which =
      query.label !== undefined ? `label ${query.label}` : query.version !== undefined ? `version ${query.version}` : 'latest version';
    throw new AppError('NOT_FOUND', `Prompt ${query.name} has no ${which}`, { ...query });
  }
  return prompt;
}

interface MoveRow {
  label: string;
  fromPromptId: number | null;
  fromVersion: string | null;
  toPromptId: number | null;
  toVersion: string | null;
  keyId: string | null;
  userId: string | null;
  movedAt: Date;
}

/** GET /:id/label-history: every move of the prompt's labels, and the holding periods they make. */
export async function labelHistory(sql: Sql, workspaceId: string, id: number, label?: string): Promise<LabelHistory> {
  const prompt = await store.selectPrompt(sql, workspaceId, id);
  if (!prompt) throw promptNotFound(id);
  const rows = await sql<MoveRow[]>`
    select label, from_prompt_id as "fromPromptId", from_version as "fromVersion", to_prompt_id as "toPromptId",
      to_version as "toVersion", moved_by_key_id as "keyId", moved_by_user_id as "userId", moved_at as "movedAt"
    from prompt_label_moves
    where prompt_group_id = ${prompt.promptGroupId} ${label === undefined ? sql`` : sql`and label = ${label}`}
    order by id`;
  const moves: LabelMove[] = rows.map((r) => ({
    label: r.label,
    from: r.fromPromptId === null ? null : { promptId: r.fromPromptId, version: r.fromVersion! },
    to: r.toPromptId === null ? null : { promptId: r.toPromptId, version: r.toVersion! },
    movedAt: r.movedAt.toISOString(),
    movedBy: { apiKeyId: r.keyId, userId: r.userId },
  }));
  return { name: prompt.name, promptGroupId: prompt.promptGroupId, moves, holdings: holdingsOf(moves) };
}

/** Each move ends the period of the version that held the label and starts the next one's. */
export function holdingsOf(moves: LabelMove[]): LabelHistory['holdings'] {
  const holdings: LabelHistory['holdings'] = [];
  const open = new Map<string, LabelHistory['holdings'][number]>();
  for (const move of moves) {
    const previous = open.get(move.label);
    if (previous) {
      previous.heldUntil = move.movedAt;
      previous.endedBy = move.movedBy;
      open.delete(move.label);
    }
    if (move.to) {
      const holding = { label: move.label, ...move.to, heldFrom: move.movedAt, heldUntil: null, setBy: move.movedBy, endedBy: null };
      holdings.push(holding);
      open.set(move.label, holding);
    }
  }
  return holdings;
}
