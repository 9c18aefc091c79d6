import { structuredPatch } from 'diff';
import type { Sql } from '../../stores/postgres.js';
import { AppError, notFound } from '../../http/wire/errors.js';
import { renderTemplate } from '../model/render.js';
import type { JsonChange, PromptDiff, TextDiff } from '../model/diff-schemas.js';
import type { Prompt } from '../model/schemas.js';
import * as store from '../tables/prompts-table.js';

/** Lines of context around each change, as `git diff` shows them. */
const CONTEXT_LINES = 3;

/** A line diff of one text field as hunks; a missing text (null) diffs as the empty text. */
export function diffText(before: string | null, after: string | null): TextDiff {
  const patch = structuredPatch('', '', before ?? '', after ?? '', '', '', { context: CONTEXT_LINES });
  return {
    changed: (before ?? null) !== (after ?? null),
    hunks: patch.hunks.map((h) => ({
      oldStart: h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newStart,
      newLines: h.newLines,
      lines: h.lines,
    })),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A normalized JSONPath (RFC 9535): `$['properties']['answer']['type']`, `$['items'][0]`. */
function childPath(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : `${path}['${key.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
}

/**
 * Paths added, removed and changed between two JSON values. Objects are compared key by key
 * and arrays index by index, down to the first value that differs in kind or content.
 */
export function diffJson(before: unknown, after: unknown): JsonChange {
  const result: JsonChange = { added: [], removed: [], changed: [] };
  const walk = (a: unknown, b: unknown, path: string) => {
    if (isObject(a) && isObject(b)) {
      for (const key of Object.keys(a)) {
        if (!Object.hasOwn(b, key)) result.removed.push({ path: childPath(path, key), value: a[key] });
        else walk(a[key], b[key], childPath(path, key));
      }
      for (const key of Object.keys(b)) if (!Object.hasOwn(a, key)) result.added.push({ path: childPath(path, key), value: b[key] });
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
        if (i >= b.length) result.removed.push({ path: childPath(path, i), value: a[i] });
        else if (i >= a.length) result.added.push({ path: childPath(path, i), value: b[i] });
        else walk(a[i], b[i], childPath(path, i));
      }
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) result.changed.push({ path, from: a, to: b });
  };
  // A field that is null on one side is added or removed whole.
  if (before === null && after !== null) result.added.push({ path: '$', value: after });
  else if (before !== null && after === null) result.removed.push({ path: '$', value: before });
  else walk(before, after, '$');
  return result;
}

/** The placeholders a version's templates use (system, human and raw prompt). */
export function templateVariables(p: Pick<Prompt, 'systemPrompt' | 'humanPrompt' | 'rawPrompt'>): string[] {
  const names = new Set<string>();
  for (const text of [p.systemPrompt, p.humanPrompt, p.rawPrompt]) {
    if (text !== null) for (const name of renderTemplate(text, {}).placeholders) names.add(name);
  }
  return [...names].sort();
}

const versionSummary = (p: Prompt) => ({ id: p.id, version: p.version, isLatest: p.isLatest, labels: p.labels, createdAt: p.createdAt });

/** The diff from version `against` (before) to version `id` (after). */
export function comparePrompts(before: Prompt, after: Prompt): PromptDiff {
  const beforeVars = templateVariables(before);
  const afterVars = templateVariables(after);
  return {
    name: after.name,
    from: versionSummary(before),
    to: versionSummary(after),
    systemPrompt: diffText(before.systemPrompt, after.systemPrompt),
    humanPrompt: diffText(before.humanPrompt, after.humanPrompt),
    rawPrompt: diffText(before.rawPrompt, after.rawPrompt),
    outputSchema: diffJson(before.outputSchema, after.outputSchema),
    metadata: diffJson(before.metadata, after.metadata),
    variables: {
      from: beforeVars,
      to: afterVars,
      added: afterVars.filter((v) => !beforeVars.includes(v)),
      removed: beforeVars.filter((v) => !afterVars.includes(v)),
    },
  };
}

/** GET /:id/diff?against=: both versions of this workspace and of one prompt name, or 404 / 400. */
export async function diffVersions(sql: Sql, workspaceId: string, id: number, against: number): Promise<PromptDiff> {
  const [after, before] = await Promise.all([store.selectPrompt(sql, workspaceId, id), store.selectPrompt(sql, workspaceId, against)]);
  if (!after) throw notFound('Prompt', { id });
  if (!before) throw notFound('Prompt', { id: against });
  if (before.promptGroupId !== after.promptGroupId) {
    throw new AppError('VALIDATION_ERROR', `Version ${against} is not a version of ${after.name}`, {
      issues: [{ path: 'querystring.against', message: `must be a version of the prompt ${after.name}` }],
    });
  }
  return comparePrompts(before, after);
}
