import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { flushLines, pendingOf } from './pending-lines.js';
import type { WriteTarget } from './write-batcher-types.js';
import { inApplyOrder } from './apply-order.js';
import { type PendingRow, type SpanRow } from '../tables/span-rows.js';
import { recomputeTraceSummaries } from '../summaries/recompute.js';
import { insertSpanLines } from '../tables/spans-table.js';

/** A write the writer took (write-batcher.ts), waiting for its flush. */
export interface PendingWrite<Pending = PendingRow> {
  /** Its number: in the log's order, or the writer's own without a log. */
  seq: number;
  workspaceId: string;
  rows: Pending[];
  /** Its rows' JSON, one a line, encoded as the write was taken or replayed (pending-lines.ts): what the insert sends. */
  lines: Buffer;
  traceIds: string[];
  /**
   * Its rows may be in the store already without their traces' summaries: replayed from the log
   * (a flush may have stored them before the process stopped) or taken by a flush that failed.
   * Its traces' spans are read back, not taken from the flush's rows (recompute.ts).
   */
  maybeStored?: boolean;
  /** Without a log the caller waits for the engine: its promise settles with the flush. */
  caller?: { resolve(): void; reject(error: unknown): void };
}

/**
 * What one flush does to the engine: the writes' span rows, at the versions their order gives
 * them above `floor` (`inApplyOrder`), in one insert; then the summaries of the traces they
 * touch, recomputed per workspace (recompute.ts): the spans of a trace the store held nothing of
 * are taken from the rows written rather than read back (but those of `maybeStored` writes).
 * `applying` hears the rows and the new floor before the insert starts (a read lays them over
 * the store meanwhile: pending-summaries.ts), and `fresh` which traces the store held no summary
 * of before the summaries are written. When it fails, its writes are marked `maybeStored`.
 * Returns the newest version written, the rows inserted and the insert's milliseconds.
 */
export async function flushWrites(...args: Parameters<typeof applyWrites>): ReturnType<typeof applyWrites> {
  const [, batch] = args;
  try {
    return await applyWrites(...args);
  } catch (error) {
    // Its rows may be stored without their summaries: whatever flush takes them next reads them back.
    for (const w of batch) w.maybeStored = true;
    throw error;
  }
}

async function applyWrites(
  clickhouse: ClickHouseClient,
  batch: PendingWrite[],
  floor: bigint,
  applying: (rows: PendingRow[], floor: bigint) => void,
  /** Hears, per workspace and before their summaries are written, the traces the store held nothing of before this flush. */
  fresh: (workspaceId: string, traceIds: string[]) => void = () => {},
): Promise<{ version: bigint; rows: number; insertMs: number }> {
  const started = performance.now();
  const raised = inApplyOrder(
    batch.map((w) => w.rows),
    floor,
  );
  applying(raised.rows, raised.floor);
  await insertSpanLines(clickhouse, flushLines(batch, raised.rows));
  const insertMs = performance.now() - started;
  const traceIds = new Map<string, Set<string>>();
  const readBack = new Set<string>();
  for (const w of batch) {
    const ids = traceIds.get(w.workspaceId) ?? new Set<string>();
    for (const id of w.traceIds) ids.add(id);
    traceIds.set(w.workspaceId, ids);
    if (w.maybeStored) for (const id of w.traceIds) readBack.add(`${w.workspaceId}/${id}`);
  }
  let version = raised.floor;
  for (const [workspaceId, ids] of traceIds) {
    const written = raised.rows.filter((row) => row.workspace_id === workspaceId);
    const newest = await recomputeTraceSummaries(
      clickhouse,
      workspaceId,
      [...ids],
      version,
      written,
      (traceIds) => fresh(workspaceId, traceIds),
      // A trace without a summary row has no stored spans but this flush's, unless a write of it may have been stored before.
      (traceId) => !readBack.has(`${workspaceId}/${traceId}`),
    );
    if (newest > version) version = newest;
  }
  return { version, rows: raised.rows.length, insertMs };
}

/** The trace writer's target: span rows, one insert a flush, then their traces' summaries. */
export const spanTarget: WriteTarget<SpanRow, PendingRow> = { pendingOf, apply: flushWrites };
