import type { Sql } from '../../stores/postgres.js';
import { AppError, notFound } from '../../http/wire/errors.js';
import { renderPromptTemplates, type RenderedPrompt } from '../model/render.js';
import type { CreatePrompt, CreateVersion, ListPromptsQuery, Prompt, RenderBody, UpdatePrompt, VersionChanges } from '../model/schemas.js';
import * as store from '../tables/prompts-table.js';
import type { MovedBy } from '../model/label-schemas.js';
import { setLabelInTx } from './labels.js';
import { enqueueEvent } from '../tables/webhook-outbox-table.js';
import { bumpVersion, isGreater, parseVersion, versionOf, type Version } from '../model/version.js';

const promptNotFound = (id: number) => notFound('Prompt', { id });

/** What a prompt.version.created event carries: the version's identity; receivers read the content by id. */
const versionCreatedData = (p: Prompt) => ({
  id: p.id,
  name: p.name,
  version: p.version,
  promptGroupId: p.promptGroupId,
  isLatest: p.isLatest,
  labels: p.labels,
});

/** Unique violations are lost races or taken names: the client hears 409, never 500. */
async function mappingConflicts<T>(write: () => Promise<T>, context: { name: string; version?: string }): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (store.pgErrorCode(error) !== '23505') throw error;
    const constraint = (error as { constraint_name?: string }).constraint_name ?? '';
    if (constraint.startsWith('prompt_groups')) {
      throw new AppError('CONFLICT', `A prompt named ${context.name} exists in this workspace`, { name: context.name });
    }
    throw new AppError('CONFLICT', `Version ${context.version ?? ''} of ${context.name} could not be stored: it was written concurrently`, {
      ...context,
    });
  }
}

function versionFrom(text: string): Version {
  const check = parseVersion(text);
  if (!check.ok) throw new AppError('VALIDATION_ERROR', check.reason, { issues: [{ path: 'body.version', message: check.reason }] });
  return check.version;
}

/** The base record's content with the given changes laid over it; `null` clears an optional field. */
function mergeContent(base: Prompt, changes: Omit<VersionChanges, 'isLatest'>): store.PromptContent {
  const pick = <K extends keyof store.PromptContent>(key: K): store.PromptContent[K] =>
    changes[key] === undefined ? base[key] : changes[key];
  return {
    systemPrompt: pick('systemPrompt'),
    humanPrompt: pick('humanPrompt'),
    rawPrompt: pick('rawPrompt'),
    description: pick('description'),
    metadata: pick('metadata'),
    outputSchema: pick('outputSchema'),
  };
}

/** The first version of a new name; it is the latest because it is the only one. */
export async function createPrompt(sql: Sql, workspaceId: string, input: CreatePrompt): Promise<Prompt> {
  const version = versionFrom(input.version);
  return await mappingConflicts(
    () =>
      sql.begin(async (tx) => {
        const groupId = await store.insertGroup(tx, workspaceId, input.name);
        const prompt = await store.insertVersion(tx, {
          workspaceId,
          groupId,
          name: input.name,
          version,
          isLatest: true,
          content: {
            systemPrompt: input.systemPrompt,
            humanPrompt: input.humanPrompt ?? null,
            rawPrompt: input.rawPrompt ?? null,
            description: input.description,
            metadata: input.metadata,
            outputSchema: input.outputSchema ?? null,
          },
        });
        await enqueueEvent(tx, workspaceId, 'prompt.version.created', versionCreatedData(prompt));
        return prompt;
      }),
    { name: input.name, version: version.text },
  );
}

/**
 * Adds a version to the prompt of record `baseId`: content from the base record with the
 * changes laid over it, and a version number the caller picks (`explicit`) or one computed
 * from the highest existing version (`bump`). Runs with the group locked, so two writers
 * never both see "greater than every version" for the same number.
 */
async function addVersion(
  sql: Sql,
  workspaceId: string,
  baseId: number,
  next: { explicit: Version } | { bump: 'patch' | 'minor' | 'major' },
  changes: Omit<VersionChanges, 'isLatest'>,
  isLatest: boolean,
  labels: { names: string[]; movedBy: MovedBy } | undefined = undefined,
): Promise<Prompt> {
  const context: { name: string; version?: string } = { name: '' };
  return await mappingConflicts(
    () =>
      sql.begin(async (tx) => {
        const base = await store.selectPrompt(tx, workspaceId, baseId);
        if (!base) throw promptNotFound(baseId);
        context.name = base.name;
        // The prompt may have been deleted since the read above: then it is gone for this writer too.
        if (!(await store.lockGroup(tx, workspaceId, base.promptGroupId))) throw promptNotFound(baseId);
        const highestText = await store.selectHighestVersion(tx, base.promptGroupId);
        const highest = highestText === undefined ? undefined : versionOf(highestText);
        let version: Version;
        if ('explicit' in next) {
          version = next.explicit;
          context.version = version.text;
          if (highest && !isGreater(version, highest)) {
            throw new AppError(
              'CONFLICT',
              `Version ${version.text} of ${base.name} is not greater than every existing version (highest: ${highest.text})`,
              {
                name: base.name,
                newVersion: version.text,
                highestVersion: highest.text,
              },
            );
          }
        } else {
          const bumped = bumpVersion(highest ?? versionOf(base.version), next.bump);
          if (!bumped.ok)
            throw new AppError('CONFLICT', `The version of ${base.name} cannot be incremented further: ${bumped.reason}`, {
              name: base.name,
            });
          version = bumped.version;
          context.version = version.text;
        }
        if (isLatest) await store.clearLatest(tx, base.promptGroupId);
        let prompt = await store.insertVersion(tx, {
          workspaceId,
          groupId: base.promptGroupId,
          name: base.name,
          version,
          isLatest,
          content: mergeContent(base, changes),
        });
        if (labels && labels.names.length > 0) {
          for (const label of labels.names) await setLabelInTx(tx, prompt, label, labels.movedBy);
          prompt = (await store.selectPrompt(tx, workspaceId, prompt.id))!;
        }
        // Announced after the labels so the event names them; the label moves have their own events.
        await enqueueEvent(tx, workspaceId, 'prompt.version.created', versionCreatedData(prompt));
        return prompt;
      }),
    context,
  );
}

/** POST /:id/versions: `isLatest: true` moves the flag; false or absent leaves it where it is. */
export async function createVersion(sql: Sql, workspaceId: string, baseId: number, body: CreateVersion, movedBy: MovedBy): Promise<Prompt> {
  const { isLatest, ...changes } = body.changes;
  const labels = { names: [...new Set(body.labels ?? [])], movedBy };
  return await addVersion(sql, workspaceId, baseId, { explicit: versionFrom(body.newVersion) }, changes, isLatest === true, labels);
}

/** PATCH /:id: an update is a new version, numbered after the highest one, and it becomes the latest. */
export async function updatePrompt(sql: Sql, workspaceId: string, baseId: number, body: UpdatePrompt): Promise<Prompt> {
  const { bump, ...changes } = body;
  return await addVersion(sql, workspaceId, baseId, { bump }, changes, true);
}

export async function getPrompt(sql: Sql, workspaceId: string, id: number): Promise<Prompt> {
  const prompt = await store.selectPrompt(sql, workspaceId, id);
  if (!prompt) throw promptNotFound(id);
  return prompt;
}

export async function listPrompts(sql: Sql, workspaceId: string, query: ListPromptsQuery) {
  return await store.selectPrompts(sql, workspaceId, query);
}

/** Removes the whole prompt: the group of record `id` and, by cascade, every version in it. */
export async function deletePrompt(sql: Sql, workspaceId: string, id: number) {
  return await sql.begin(async (tx) => {
    const prompt = await store.selectPrompt(tx, workspaceId, id);
    if (!prompt) throw promptNotFound(id);
    const deletedVersions = await store.deleteGroup(tx, workspaceId, prompt.promptGroupId);
    if (deletedVersions === 0) throw promptNotFound(id);
    await enqueueEvent(tx, workspaceId, 'prompt.deleted', { name: prompt.name, promptGroupId: prompt.promptGroupId, deletedVersions });
    return { promptGroupId: prompt.promptGroupId, name: prompt.name, deletedVersions };
  });
}

export async function renderPrompt(
  sql: Sql,
  workspaceId: string,
  id: number,
  body: RenderBody,
): Promise<RenderedPrompt & { promptId: number; version: string }> {
  const prompt = await getPrompt(sql, workspaceId, id);
  return { promptId: prompt.id, version: prompt.version, ...renderPromptTemplates(prompt, body.variables) };
}
