import type { PromptFiguresReader, PromptVersionFigures } from '../../contract/prompt-figures.js';
import type { PromptScores } from '../../contract/prompt-scores.js';
import type { Sql } from '../../stores/postgres.js';
import { notFound } from '../../http/wire/errors.js';
import type { CompareQuery, PromptComparison } from '../model/compare-schemas.js';
import * as store from '../tables/prompts-table.js';

/**
 * GET /api/prompt/:id/compare: two versions (of one prompt or two) side by side, from the spans
 * that used each (contract/prompt-figures.ts) and the scores on them (contract/prompt-scores.ts).
 */
export async function comparePromptVersions(
  sql: Sql,
  figures: PromptFiguresReader,
  scores: PromptScores,
  workspaceId: string,
  id: number,
  query: CompareQuery,
): Promise<PromptComparison> {
  const [subject, baseline] = await Promise.all([
    store.selectPrompt(sql, workspaceId, id),
    store.selectPrompt(sql, workspaceId, query.against),
  ]);
  if (!subject) throw notFound('Prompt', { id });
  if (!baseline) throw notFound('Prompt', { id: query.against });
  const window = { startAfter: query.startAfter, startBefore: query.startBefore };
  // The figures of every version of a prompt come in one read: one per prompt name, not per side.
  const names = [...new Set([subject.name, baseline.name])];
  const figuresByName = new Map(names.map((name) => [name, figures(workspaceId, name, window)]));
  const figuresOf = async (prompt: { id: number; name: string; version: string }) => {
    const row: PromptVersionFigures | undefined = (await figuresByName.get(prompt.name)!).find((r) => r.version === prompt.version);
    return {
      promptId: prompt.id,
      name: prompt.name,
      version: prompt.version,
      calls: row?.calls ?? 0,
      costPerCall: row?.costPerCall ?? null,
      latencyMs: { p50: row?.latencyP50 ?? null, p95: row?.latencyP95 ?? null },
      errorRate: row?.errorRate ?? 0,
    };
  };
  const [subjectFigures, baselineFigures, comparisons] = await Promise.all([
    figuresOf(subject),
    figuresOf(baseline),
    scores.compare(workspaceId, subject, baseline, window),
  ]);
  return {
    subject: subjectFigures,
    baseline: baselineFigures,
    range: { startAfter: query.startAfter ?? null, startBefore: query.startBefore ?? null },
    scores: comparisons,
  };
}
