import type { ClickHouseClient } from '../stores/clickhouse.js';
import { AppError } from '../http/errors.js';
import { isStoreUnavailable } from '../http/error-handler.js';
import type { SpanRow } from './rows.js';
import { recomputeTraceSummaries } from './recompute.js';
import { insertSpanRows } from './spans-table.js';

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
 * One is made per app with its stores (server.ts, buildApp) and handed to the routes.
 */
export class WriteBatcher {
  private queue: PendingWrite[] = [];
  private flushing = false;
  /** Writes taken and flushes run, for the logs and the tests: writes / flushes is the batching. */
  readonly counts = { writes: 0, flushes: 0, isolations: 0 };

  constructor(
    /** The store it writes to; ingest also prices spans with the pricing attached to it (cost/pricing.ts). */
    readonly clickhouse: ClickHouseClient,
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

  /** One statement pair for the writes given: their spans, then their traces' summaries. */
  private async flush(batch: PendingWrite[]): Promise<void> {
    this.counts.flushes += 1;
    await insertSpanRows(this.clickhouse, batch.flatMap((w) => w.rows));
    const traceIds = new Map<string, Set<string>>();
    for (const w of batch) {
      const ids = traceIds.get(w.workspaceId) ?? new Set<string>();
      for (const id of w.traceIds) ids.add(id);
      traceIds.set(w.workspaceId, ids);
    }
    for (const [workspaceId, ids] of traceIds) await recomputeTraceSummaries(this.clickhouse, workspaceId, [...ids]);
  }

  private async flushAll(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.takeBatch();
        try {
          await this.flush(batch);
          for (const w of batch) w.resolve();
        } catch (error) {
          if (batch.length === 1 || isStoreUnavailable(error)) {
            for (const w of batch) w.reject(alone(error, batch.length === 1));
            continue;
          }
          // One request's data must never fail another's: each write of the failed flush is
          // retried alone, and only the writes that fail alone hear of it (the upsert makes
          // a retry of rows that did land harmless).
          this.counts.isolations += 1;
          for (const w of batch) {
            try {
              await this.flush([w]);
              w.resolve();
            } catch (single) {
              w.reject(alone(single, true));
            }
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}

/**
 * Engine errors that say "later", not "never": the store is busy or short of something.
 * A write failing alone with any other engine error is refused for its data (400), so a
 * client never retries a payload that cannot succeed.
 */
const transientEngineErrors = /MEMORY_LIMIT|TOO_MANY|TIMEOUT|NETWORK|SOCKET|UNAVAILABLE|ABORTED|READONLY|NOT_ENOUGH_SPACE|KEEPER|REPLICA|QUOTA/;

function alone(error: unknown, isolated: boolean): unknown {
  if (!isolated || error instanceof AppError || isStoreUnavailable(error)) return error;
  const type = (error as { type?: unknown }).type;
  if (typeof type !== 'string' || transientEngineErrors.test(type)) return error;
  return new AppError('VALIDATION_ERROR', `The trace store refused this payload (${type}); it was not stored`, {
    issues: [{ path: 'body', message: `was refused by the trace store (${type})` }],
  });
}
