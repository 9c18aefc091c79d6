import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import { firstIssuePerPath, issuePath } from '../../http/wire/errors.js';
import { scoreInputSchema, type ScoreIngestResult, type ScoreInput } from '../api/schemas.js';
import { isIssue, resolveScoreValue } from '../model/score-rules.js';
import { toStoredTime } from '../model/stored-time.js';
import type { VersionClock } from '../model/version-clock.js';
import { selectScoreConfigsByName } from '../tables/configs-table.js';
import { selectScoresByIds, type ScoreRowToInsert } from '../tables/scores-table.js';
import { unappliedCreatedAt, type ScoreWrites } from './score-writes.js';
import { newScoreId } from './score-ids.js';
import type { ScoreConfigCache } from './config-cache.js';

export interface ScoreStores {
  clickhouse: ClickHouseClient;
  sql: Sql;
  clock: VersionClock;
  /** The score writer (score-writes.ts): ingest hands it the rows, reads wait for what it has not applied. */
  writes: ScoreWrites;
  /** The configs kept in memory (config-cache.ts); without it, each request reads those of its names. */
  configs?: ScoreConfigCache;
  /**
   * The score writer is the store's only writer (the embedded engine: one process, one writer).
   * A score id ingest generates then has no row stored before its own (a correction names it only
   * once answered, and is applied after it), so its row is marked `fresh_id` and the engine does
   * not look up its earlier rows (clickhouse/0026). Unset with a ClickHouse server, which other
   * replicas write too.
   */
  onlyWriter?: boolean;
}

export interface ScoreWriter {
  workspaceId: string;
  /** The API key id or the token subject that wrote the scores. */
  authorId: string;
  /** The source of scores that name none (`api` for the REST API). */
  defaultSource: ScoreInput['source'];
}

/**
 * Validates each score on its own (shape, then its config), hands the valid ones to the score
 * writer as one write, answered once it is durable (in the write-ahead log; every read of
 * scores waits for it to be applied: score-writes.ts), and answers per index, like trace
 * ingest: one bad score never fails another. A re-sent id is a correction: a new row of a
 * higher version that keeps the first write's creation time (from the store, or from a write
 * not yet applied).
 */
export async function ingestScores(
  stores: ScoreStores,
  writer: ScoreWriter,
  items: unknown[],
  /** Ids the caller knows were never written (an evaluator job's first attempt): no earlier creation time is looked for. */
  newIds: ReadonlySet<string> = new Set(),
): Promise<ScoreIngestResult> {
  const errors: ScoreIngestResult['errors'] = [];
  const ids: (string | null)[] = items.map(() => null);
  const valid: { index: number; score: ScoreInput }[] = [];
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const parsed = scoreInputSchema.safeParse(item);
    const sentId = typeof (item as { id?: unknown } | null)?.id === 'string' ? (item as { id: string }).id : null;
    if (!parsed.success) {
      for (const issue of firstIssuePerPath(parsed.error.issues))
        errors.push({ index, id: sentId, path: issuePath(`scores.${index}`, issue.path), message: issue.message });
      return;
    }
    const id = parsed.data.id;
    if (id !== undefined) {
      const first = seen.get(id);
      if (first !== undefined) {
        errors.push({ index, id, path: `scores.${index}.id`, message: `duplicates the id of scores.${first}` });
        return;
      }
      seen.set(id, index);
    }
    valid.push({ index, score: parsed.data });
  });

  const names = [...new Set(valid.map((v) => v.score.name))];
  const configs = await (stores.configs
    ? stores.configs.byName(writer.workspaceId, names)
    : selectScoreConfigsByName(stores.sql, writer.workspaceId, names));
  const sentIds = valid.flatMap((v) => (v.score.id === undefined || newIds.has(v.score.id) ? [] : [v.score.id]));
  const earlier = sentIds.length === 0 ? new Map<string, string>() : await firstCreatedAt(stores, writer.workspaceId, sentIds);

  // The request's time, in its stored form once (a default of every row that names none).
  const now = toStoredTime(new Date().toISOString());
  const rows: ScoreRowToInsert[] = [];
  for (const { index, score } of valid) {
    const resolved = resolveScoreValue(score, configs.get(score.name));
    if (isIssue(resolved)) {
      errors.push({ index, id: score.id ?? null, path: `scores.${index}.${resolved.field}`, message: resolved.message });
      continue;
    }
    const id = score.id ?? newScoreId();
    ids[index] = id;
    // Empty columns left undefined: the line leaves them out and the engine stores '' (ScoreRowToInsert).
    rows.push({
      workspace_id: writer.workspaceId,
      id,
      name: score.name,
      data_type: resolved.dataType,
      value: resolved.value,
      string_value: resolved.stringValue || undefined,
      comment: score.comment || undefined,
      metadata: score.metadata === undefined ? undefined : JSON.stringify(score.metadata),
      source: score.source ?? writer.defaultSource ?? 'api',
      environment: score.environment,
      trace_id: score.traceId,
      span_id: score.spanId,
      session_id: score.sessionId,
      author_id: writer.authorId,
      config_id: resolved.configId || undefined,
      eval_trace_id: score.evalTraceId,
      timestamp: score.timestamp === undefined ? now : toStoredTime(score.timestamp),
      created_at: earlier.get(id) ?? now,
      version: stores.clock.next().toString(),
      is_deleted: undefined,
      fresh_id: score.id === undefined && stores.onlyWriter ? 1 : undefined,
    });
  }
  if (rows.length > 0)
    await stores.writes.write(writer.workspaceId, rows, [
      ...new Set(rows.flatMap((row) => (row.trace_id === undefined ? [] : [row.trace_id]))),
    ]);
  errors.sort((a, b) => a.index - b.index);
  return { accepted: rows.length, rejected: items.length - rows.length, ids, errors };
}

/**
 * The creation time of each id already written: stored, or answered and not yet applied. The
 * writes not yet applied are read before and after the store, so a write that lands while the
 * store is read is seen in one or the other.
 */
async function firstCreatedAt(stores: ScoreStores, workspaceId: string, ids: string[]): Promise<Map<string, string>> {
  const wanted = new Set(ids);
  const before = unappliedCreatedAt(stores.writes, workspaceId, wanted);
  const stored = await selectScoresByIds(stores.clickhouse, { workspaceId, ids });
  const out = new Map([...unappliedCreatedAt(stores.writes, workspaceId, wanted), ...before]);
  for (const row of stored) out.set(row.id, row.created_at_text);
  return out;
}
