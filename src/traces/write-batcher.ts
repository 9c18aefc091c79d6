import type { ClickHouseClient } from '../stores/clickhouse.js';
import type { SpanRow } from './rows.js';
import { insertSpanRows, recomputeTraceSummaries } from './queries.js';

interface PendingWrite {
  workspaceId: string;
  rows: SpanRow[];
  traceIds: string[];
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit for ingestion. Concurrent ingest requests share one span insert and one summary
 * recompute per workspace, instead of one each: the engine's cost per statement (a new part,
 * a read of every part's index) is paid once per flush, and fewer, larger parts leave less to
 * merge. A write that finds the writer idle is flushed at once (no added latency); writes that
 * arrive during a flush go together into the next one. Each caller's promise settles only
 * after its spans and its traces' summaries are stored, so an answered ingest is readable.
 * Flushes run one at a time, which also keeps the summary versions of one process in order.
 */
export class WriteBatcher {
  private queue: PendingWrite[] = [];
  private flushing = false;
  /** Writes taken and flushes run, for the logs and the tests: writes / flushes is the batching. */
  readonly counts = { writes: 0, flushes: 0 };

  constructor(
    private readonly clickhouse: ClickHouseClient,
    /** Rows in one flush at most; the rest wait for the next. */
    private readonly maxRows = 50_000,
  ) {}

  write(workspaceId: string, rows: SpanRow[], traceIds: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.counts.writes += 1;
      this.queue.push({ workspaceId, rows, traceIds, resolve, reject });
      if (!this.flushing) void this.flushAll();
    });
  }

  private takeBatch(): PendingWrite[] {
    let rows = 0;
    let count = 0;
    while (count < this.queue.length && (count === 0 || rows + this.queue[count]!.rows.length <= this.maxRows)) {
      rows += this.queue[count]!.rows.length;
      count += 1;
    }
    return this.queue.splice(0, count);
  }

  private async flushAll(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.takeBatch();
        this.counts.flushes += 1;
        try {
          await insertSpanRows(this.clickhouse, batch.flatMap((w) => w.rows));
          const traceIds = new Map<string, Set<string>>();
          for (const w of batch) {
            const ids = traceIds.get(w.workspaceId) ?? new Set<string>();
            for (const id of w.traceIds) ids.add(id);
            traceIds.set(w.workspaceId, ids);
          }
          for (const [workspaceId, ids] of traceIds) await recomputeTraceSummaries(this.clickhouse, workspaceId, [...ids]);
          for (const w of batch) w.resolve();
        } catch (error) {
          // Nothing of a failed flush is acknowledged: every caller in it hears the failure and
          // may retry (the upsert makes a retry of rows that did land harmless).
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}

const batchers = new WeakMap<ClickHouseClient, WriteBatcher>();

/** One batcher per ClickHouse client, so every route that ingests shares it. */
export function writeBatcherFor(clickhouse: ClickHouseClient): WriteBatcher {
  let batcher = batchers.get(clickhouse);
  if (!batcher) {
    batcher = new WriteBatcher(clickhouse);
    batchers.set(clickhouse, batcher);
  }
  return batcher;
}
