import type { ClickHouseClient } from '../stores/clickhouse.js';
import type { Sql } from '../stores/postgres.js';
import { notFound } from '../http/errors.js';
import { toStoredTime } from '../traces/rows.js';
import type { PromptMetrics, PromptMetricsQuery, VersionMetrics } from './metrics-schemas.js';
import * as store from './store.js';

/**
 * Per version of one prompt name, over the workspace's spans that name it, in one aggregate
 * query. Spans are deduplicated with LIMIT 1 BY over a narrow column set (FINAL would block
 * the prompt_name bloom filter on a wide scan). Tombstones carry no prompt name, so they are
 * read beside the named rows: a span whose newest row is a tombstone (a deleted trace) drops out.
 * Percentiles are exact (`quantilesExactInclusive`), as in the trace stats.
 */
export const promptVersionMetricsSql = (where: string) => `
  SELECT
    prompt_version AS version,
    count() AS calls,
    countIf(status = 'error') AS errorCount,
    errorCount / calls AS errorRate,
    sum(ifNull(input_tokens, 0)) AS inputTokens,
    sum(ifNull(output_tokens, 0)) AS outputTokens,
    sum(ifNull(total_tokens, 0)) AS totalTokens,
    sum(ifNull(cost_usd, 0)) AS costUsd,
    costUsd / calls AS costPerCall,
    quantilesExactInclusive(0.5, 0.95)(duration_ms) AS latency,
    quantileExactInclusiveIf(0.5)(assumeNotNull(ttft_ms), isNotNull(ttft_ms)) AS ttftP50,
    countIf(isNotNull(ttft_ms)) AS ttftCount
  FROM (
    SELECT prompt_version, status, duration_ms, input_tokens, output_tokens, total_tokens, cost_usd, ttft_ms, is_deleted
    FROM spans
    WHERE workspace_id = {workspaceId:String}
      AND (prompt_name = {promptName:String} OR is_deleted = 1)
      ${where}
    ORDER BY version DESC
    LIMIT 1 BY trace_id, span_id
  )
  WHERE is_deleted = 0
  GROUP BY prompt_version`;

interface MetricsRow {
  version: string;
  calls: string | number;
  errorCount: string | number;
  errorRate: number;
  costPerCall: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
  latency: number[];
  ttftP50: number;
  ttftCount: string | number;
}

const finiteOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function compilePromptMetricsQuery(promptName: string, query: PromptMetricsQuery) {
  const clauses: string[] = [];
  const params: Record<string, unknown> = { promptName };
  if (query.startAfter !== undefined) {
    clauses.push("AND start_time > {startAfter:DateTime64(6, 'UTC')}");
    params.startAfter = toStoredTime(query.startAfter);
  }
  if (query.startBefore !== undefined) {
    clauses.push("AND start_time < {startBefore:DateTime64(6, 'UTC')}");
    params.startBefore = toStoredTime(query.startBefore);
  }
  return { query: promptVersionMetricsSql(clauses.join(' ')), params };
}

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

/** GET /api/prompt/:id/metrics: the versions come from PostgreSQL, the figures from ClickHouse. */
export async function promptMetrics(sql: Sql, clickhouse: ClickHouseClient, workspaceId: string, id: number, query: PromptMetricsQuery): Promise<PromptMetrics> {
  const prompt = await store.selectPrompt(sql, workspaceId, id);
  if (!prompt) throw notFound('Prompt', { id });
  const compiled = compilePromptMetricsQuery(prompt.name, query);
  const [{ prompts: versions }, result] = await Promise.all([
    store.selectPrompts(sql, workspaceId, { name: prompt.name, limit: 10_000, offset: 0 }),
    clickhouse.query({ query: compiled.query, query_params: { ...compiled.params, workspaceId }, format: 'JSONEachRow' }),
  ]);
  const rows = new Map((await result.json<MetricsRow>()).map((r) => [r.version, r]));
  const out: VersionMetrics[] = versions.map((v) => empty(v.version, v.id, v.labels));
  for (const row of rows.values()) if (!versions.some((v) => v.version === row.version)) out.push(empty(row.version, null, []));
  for (const entry of out) {
    const row = rows.get(entry.version);
    if (!row) continue;
    Object.assign(entry, {
      calls: Number(row.calls),
      errorCount: Number(row.errorCount),
      errorRate: row.errorRate,
      inputTokens: row.inputTokens,
      outputTokens: row.outputTokens,
      totalTokens: row.totalTokens,
      costUsd: row.costUsd,
      costPerCall: finiteOrNull(row.costPerCall),
      latencyMs: { p50: finiteOrNull(row.latency[0]), p95: finiteOrNull(row.latency[1]) },
      ttftMs: { p50: Number(row.ttftCount) === 0 ? null : finiteOrNull(row.ttftP50) },
    });
  }
  return { name: prompt.name, range: { startAfter: query.startAfter ?? null, startBefore: query.startBefore ?? null }, versions: out };
}
