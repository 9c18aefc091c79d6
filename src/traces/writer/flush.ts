import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { flushLines, pendingOf } from './pending-lines.js';
import type { WriteTarget } from './write-batcher-types.js';
import { inApplyOrder } from './apply-order.js';
import { type PendingRow, type SpanRow } from '../tables/span-rows.js';
import { heldSummaries, writeSummaries } from '../summaries/recompute.js';
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
   * Its traces' spans are read back, not taken from the flush's rows.
   */
  maybeStored?: boolean;
  /** Without a log the caller waits for the engine: its promise settles with the flush. */
  caller?: { resolve(): void; reject(error: unknown): void };
}

/**
 * One statement of the writer's under way: its writes, and what a read lays over the store
 * while it runs (write-batcher.ts `unapplied`, fresh/pending-summaries.ts). The flush fills it
 * in as it goes; the writer reads it.
 */
export interface Flush<Pending = PendingRow> {
  writes: PendingWrite<Pending>[];
  /** The writes' rows at the versions the flush applies them (final before the insert starts). */
  rows: Pending[];
  /** The newest version of those rows: spans and summaries applied later must exceed it. */
  floor: bigint;
  /** Per workspace, once its previous summaries are read (before any is written), the traces the store held no summary row of (spans only). */
  fresh: Map<string, Set<string>>;
  /** The newest version written, the summaries' included. */
  version: bigint;
  /** The span insert's milliseconds. */
  insertMs: number;
}

/** The next flush of `writes`: their rows at versions in apply order, above every version applied so far (apply-order.ts). */
export function flushOf(writes: PendingWrite[], applied: bigint): Flush {
  const { rows, floor } = inApplyOrder(
    writes.map((w) => w.rows),
    applied,
  );
  return { writes, rows, floor, fresh: new Map(), version: floor, insertMs: 0 };
}

/**
 * What one flush does to the engine, top to bottom:
 *
 * 1. the writes' span rows, at the versions of `flushOf`, in one insert;
 * 2. per workspace, the previous summaries of the traces the writes touch (`heldSummaries`),
 *    which tell the traces the store held nothing of (noted in `flush.fresh`);
 * 3. their summaries computed and written (`writeSummaries`): a trace the store held nothing of
 *    takes its spans from the rows written rather than a read, unless a write of it may have
 *    reached the store before (`maybeStored`).
 *
 * When it fails, its writes are marked `maybeStored`: whatever flush takes them next reads
 * their traces back.
 */
export async function flushWrites(clickhouse: ClickHouseClient, flush: Flush): Promise<void> {
  try {
    const started = performance.now();
    await insertSpanLines(clickhouse, flushLines(flush.writes, flush.rows));
    flush.insertMs = performance.now() - started;
    for (const [workspaceId, { traceIds, readBack }] of touchedTraces(flush.writes)) {
      const held = await heldSummaries(clickhouse, workspaceId, traceIds);
      flush.fresh.set(workspaceId, new Set(held.unheld));
      const fromWritten = new Set(held.unheld.filter((id) => !readBack.has(id)));
      const written = flush.rows.filter((row) => row.workspace_id === workspaceId);
      const newest = await writeSummaries(clickhouse, held, flush.version, written, fromWritten);
      if (newest > flush.version) flush.version = newest;
    }
  } catch (error) {
    for (const w of flush.writes) w.maybeStored = true;
    throw error;
  }
}

/** The traces the writes touch, by workspace, and those a `maybeStored` write touched (their spans are read back). */
function touchedTraces(writes: PendingWrite[]): Map<string, { traceIds: string[]; readBack: Set<string> }> {
  const touched = new Map<string, { ids: Set<string>; readBack: Set<string> }>();
  for (const w of writes) {
    let of = touched.get(w.workspaceId);
    if (!of) touched.set(w.workspaceId, (of = { ids: new Set(), readBack: new Set() }));
    for (const id of w.traceIds) {
      of.ids.add(id);
      if (w.maybeStored) of.readBack.add(id);
    }
  }
  return new Map([...touched].map(([workspaceId, { ids, readBack }]) => [workspaceId, { traceIds: [...ids], readBack }]));
}

/** The trace writer's target: span rows, one insert a flush, then their traces' summaries. */
export const spanTarget: WriteTarget<SpanRow, PendingRow> = { pendingOf, flushOf, apply: flushWrites };
