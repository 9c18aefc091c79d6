import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { PendingRow, SpanRow } from '../tables/span-rows.js';
import type { Flush, PendingWrite } from './flush.js';
import type { IngestLog } from './ingest-log.js';

/** The ingest writer's options (write-batcher.ts), and what it tells reads of the writes it has not applied. */

/** A workspace's writes not yet applied (`WriteBatcher.unapplied`). */
export interface UnappliedWrites<Pending = PendingRow> {
  /** The rows of the statement under way, with the versions it applies them at. */
  applying: Pending[];
  /** The other writes' rows, in the order they will be applied, versions not yet raised. */
  queued: Pending[][];
  /** The newest version applied so far (the statement under way's included). */
  floor: bigint;
  /**
   * Whether the statement under way found the store holding no summary row of the trace, once
   * it has read the summaries (before it writes any): the store then holds of that trace only
   * what the statement writes, whose rows are in `applying`. False until then, and for a trace
   * it does not touch.
   */
  freshUnderWay?: (traceId: string) => boolean;
}

/**
 * What a writer stores: what a taken write keeps of its rows until its flush (the rows as the
 * reads of unapplied writes see them, and their JSON lines, the log's line made of the same
 * bytes), and what one flush does with a batch of writes. The trace writer's is spans and
 * their traces' summaries (flush.ts, `spanTarget`); the app makes a second writer with the
 * scores' (docs/decisions/109-score-ingest-through-the-write-path.md).
 */
export interface WriteTarget<Row, Pending> {
  pendingOf(rows: readonly Row[]): { rows: Pending[]; lines: Buffer };
  /** The next flush of `writes`: their rows at the versions it applies them, above `applied` (the newest version applied so far). */
  flushOf(writes: PendingWrite<Pending>[], applied: bigint): Flush<Pending>;
  /** Applies the flush to the engine, filling in its record as it goes (the writer reads it meanwhile); marks its writes `maybeStored` when it fails. */
  apply(clickhouse: ClickHouseClient, flush: Flush<Pending>): Promise<void>;
}

export interface WriteBatcherOptions<Row = SpanRow, Pending = PendingRow> {
  /** What it stores; default spans and their summaries (`spanTarget`). */
  target?: WriteTarget<Row, Pending>;
  /**
   * Rows in one flush at most (8,000); the rest wait for the next. It bounds what one insert
   * holds in the engine's memory, apart from the backlog below (docs/benchmarks.md, seventh pass).
   */
  maxRows?: number;
  /** The longest a flush waits for concurrent callers' writes (see gathering in flush-timing.ts), in ms; 0: never. Without a log only. */
  maxGatherMs?: number;
  /**
   * The write-ahead log (ingest-log.ts). With it, a write is answered once it is in the log on
   * disk and applied to the engine afterwards; without it, once the engine stored it.
   */
  log?: IngestLog<Row>;
  /**
   * With a log: rows acknowledged and not yet applied at most (20,000); a write past it waits
   * for room. Each waits in memory as a row and its encoding. With flushes of up to 50,000 rows,
   * 20,000 cost the service ~250 MiB more at its peak under bulk ingest than 10,000 (the flushes
   * grew with it); with flushes of at most `maxRows`, the backlog absorbs a slow flush (a merge)
   * without holding clients back (docs/benchmarks.md, seventh pass).
   */
  maxBacklogRows?: number;
  /** With a log: the least time between the starts of two flushes, unless a read waits, in ms. */
  minFlushIntervalMs?: number;
  /** Where a write the engine refused alone is reported (the service's logger). */
  /**
   * Where the disk running full (the log or the store cannot take writes) is told, once when it
   * begins and once when it ends (`ms`: how long it lasted): the service's logger.
   */
  onTrouble?: (event: { began: boolean; reason: string; error?: unknown; ms?: number }) => void;
  onRefused?: (write: { seq: number; workspaceId: string; rows: number; error: string; keptIn: string }) => void;
}
