import type { PromptFiguresReader } from '../../contract/prompt-figures.js';
import type { PromptScores } from '../../contract/prompt-scores.js';
import type { Sql } from '../../stores/postgres.js';
import { notFound } from '../../http/wire/errors.js';
import type { PromptMetrics, PromptMetricsQuery, VersionMetrics } from '../model/metrics-schemas.js';
import * as store from '../tables/prompts-table.js';

const empty = (version: string, promptId: number | null, labels: string[]): VersionMetrics => ({
  version,
  promptId,
  labels,
  calls: 0,
  errorCount: 0,
  errorRate: 0,
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
  costUsd: 0,
  costPerCall: null,
  latencyMs: { p50: null, p95: null },
  ttftMs: { p50: null },
});

/**
 * GET /api/prompt/:id/metrics: the versions come from PostgreSQL, the figures of the spans that
 * name each version from the trace store (contract/prompt-figures.ts).
 */
export async function promptMetrics(
  sql: Sql,
  figures: PromptFiguresReader,
  workspaceId: string,
  id: number,
  query: PromptMetricsQuery,
  scores?: PromptScores,
): Promise<PromptMetrics> {
  const prompt = await store.selectPrompt(sql, workspaceId, id);
  if (!prompt) throw notFound('Prompt', { id });
  const [{ prompts: versions }, found, scoreMeans] = await Promise.all([
    store.selectPrompts(sql, workspaceId, { name: prompt.name, limit: 10_000, offset: 0 }),
    figures(workspaceId, prompt.name, query),
    scores?.averagesByVersion(workspaceId, prompt.name, query),
  ]);
  const rows = new Map(found.map((r) => [r.version, r]));
  const out: VersionMetrics[] = versions.map((v) => empty(v.version, v.id, v.labels));
  for (const row of rows.values()) if (!versions.some((v) => v.version === row.version)) out.push(empty(row.version, null, []));
  for (const entry of out) {
    const means = scoreMeans?.get(entry.version);
    if (means) entry.scores = means;
    const row = rows.get(entry.version);
    if (!row) continue;
    Object.assign(entry, {
      calls: row.calls,
      errorCount: row.errorCount,
      errorRate: row.errorRate,
      inputTokens: row.inputTokens,
      outputTokens: row.outputTokens,
      totalTokens: row.totalTokens,
      costUsd: row.costUsd,
      costPerCall: row.costPerCall,
      latencyMs: { p50: row.latencyP50, p95: row.latencyP95 },
      ttftMs: { p50: row.ttftP50 },
    });
  }
  return { name: prompt.name, range: { startAfter: query.startAfter ?? null, startBefore: query.startBefore ?? null }, versions: out };
}
