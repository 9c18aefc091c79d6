import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { insertScoreLines, scoreLineOf, scoreRowOf, type LoggedScoreRow, type ScoreRowToInsert } from '../tables/scores-table.js';

/**
 * How score ingest hands its rows to the service's score writer, and how reads wait for them
 * (docs/decisions/109-score-ingest-through-the-write-path.md). The writer is the trace
 * writer's machinery (a write-ahead log, one flush at a time, retries) over the target below,
 * made by the app (src/app.ts, src/server.ts): a score is answered once logged and applied in
 * batches; every read of scores waits for the workspace's answered scores not yet applied
 * (the routes' read barrier, or `readable` here), which hurries the next flush.
 */
export interface ScoreWrites {
  /** Resolves once the rows are durable: in the log, or without a log in the store. */
  write(workspaceId: string, rows: ScoreRowToInsert[], traceIds: string[]): Promise<void>;
  /** Waits for the workspace's answered scores not yet applied (with `traceIds`, those on these traces); undefined when none. */
  readable(workspaceId: string, traceIds?: readonly string[]): Promise<void> | undefined;
  /** The workspace's score rows answered and not yet applied; undefined when none. */
  unapplied(workspaceId: string): { applying: PendingScore[]; queued: PendingScore[][] } | undefined;
}

/**
 * What the writer keeps of a score row until its flush, beside the row's line: what a read of
 * the scores not yet applied needs (a correction's first creation time). Few fields a row, so
 * the thousands of rows waiting for a flush cost the service's collections little.
 */
export type PendingScore = Pick<ScoreRowToInsert, 'workspace_id' | 'id' | 'created_at'>;

/**
 * The score writer's bounds, the trace writer's (8,000 rows a flush, 20,000 waiting) taken as
 * bytes: a score's line is about 400 bytes, a span's several kilobytes, so five times the rows
 * hold about what the trace writer holds, in the engine's memory for a flush and in the service's
 * while they wait. With the trace writer's counts, a burst of requests of 1,000 scores waited for
 * room after 20 requests, and each flush of 8,000 made two parts (`scores`, `score_summary`) to merge.
 */
export const scoreWriterBounds = { maxRows: 40_000, maxBacklogRows: 100_000 };

/** A write the score writer took, as its flush sees it. */
interface ScoreWrite {
  rows: PendingScore[];
  lines: Buffer;
}

/**
 * The score writer's target (the trace writer's `WriteTarget`): a write keeps its rows' pending
 * fields and their JSON lines (the log's line is made of the same bytes); a flush inserts its
 * writes' lines in one statement. Versions stay as ingest gave them (the app's version clock),
 * so a write applied again after a crash never outranks a later correction.
 */
export const scoreTarget = {
  pendingOf: (logged: readonly LoggedScoreRow[]) => {
    const rows = logged.map(scoreRowOf);
    return {
      rows: rows.map(({ workspace_id, id, created_at }): PendingScore => ({ workspace_id, id, created_at })),
      lines: Buffer.from(rows.map(scoreLineOf).join('\n'), 'utf8'),
    };
  },
  flushOf: <W extends ScoreWrite>(writes: W[], applied: bigint) => ({
    writes,
    rows: writes.flatMap((w) => w.rows),
    floor: applied,
    fresh: new Map<string, Set<string>>(),
    version: applied,
    insertMs: 0,
  }),
  async apply(clickhouse: ClickHouseClient, flush: { writes: ScoreWrite[]; insertMs: number }): Promise<void> {
    const started = performance.now();
    const written = flush.writes.filter((w) => w.rows.length > 0);
    await insertScoreLines(clickhouse, Buffer.concat(written.flatMap((w, i) => (i === 0 ? [w.lines] : [newline, w.lines]))));
    flush.insertMs = performance.now() - started;
  },
};

const newline = Buffer.from('\n');

/**
 * The creation times of the given score ids among the workspace's rows not yet applied: a
 * correction keeps its score's first creation time even while the first write waits for its
 * flush.
 */
export function unappliedCreatedAt(writes: ScoreWrites, workspaceId: string, ids: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  const unapplied = writes.unapplied(workspaceId);
  if (!unapplied) return out;
  for (const rows of [unapplied.applying, ...unapplied.queued])
    for (const row of rows) if (ids.has(row.id) && !out.has(row.id)) out.set(row.id, row.created_at);
  return out;
}
