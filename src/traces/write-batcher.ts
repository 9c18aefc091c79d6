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
 * a read of every part's index, the statement's analysis) is paid once per flush, and fewer,
 * larger parts leave less to merge. Writes that arrive during a flush go together into the
 * next one. Each caller's promise settles only after its spans and its traces' summaries are
 * stored, so an answered ingest is readable. Flushes run one at a time, which also keeps the
 * summary versions of one process in order.
 *
 * The client is the writer's own (in the embedded engine a session of its own, so reads do not
 * wait behind a flush: stores/clickhouse.ts). Two writers flushing side by side on two sessions
 * were measured slower on 2 cores than one (docs/benchmarks.md). One is made per app with its
 * stores (server.ts, buildApp) and handed to the routes.
 */
export class WriteBatcher {
  private queue: PendingWrite[] = [];
  private flushing = false;
  /** Writes taken and flushes run, for the logs and the tests: writes / flushes is the batching. */
  readonly counts = { writes: 0, flushes: 0, isolations: 0 };
  private readonly maxRows: number;
  private readonly maxGatherMs: number;
  /** Callers writing at once, as the last flush saw them: the writes it carried and those queued when it ended. */
  private concurrency = 0;
  private lastFlushMs = 0;
  private gatherTimer: NodeJS.Timeout | undefined;
  /** The gathering wait of the next flush is over. */
  private gathered = false;

  constructor(
    /** The store it writes to; ingest also prices spans with the pricing attached to it (cost/pricing.ts). */
    readonly clickhouse: ClickHouseClient,
    options: {
      /** Rows in one flush at most; the rest wait for the next. */
      maxRows?: number;
      /** The longest a flush waits for concurrent callers' writes (see gathering), in ms; 0: never. */
      maxGatherMs?: number;
    } = {},
  ) {
    this.maxRows = options.maxRows ?? 50_000;
    this.maxGatherMs = options.maxGatherMs ?? 8;
  }

  write(workspaceId: string, rows: SpanRow[], traceIds: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.counts.writes += 1;
      this.queue.push({ workspaceId, rows, traceIds, resolve, reject });
      if (this.gatherTimer && this.queue.length >= this.concurrency) {
        clearTimeout(this.gatherTimer);
        this.gatherTimer = undefined;
        this.gathered = true;
      }
      this.schedule();
    });
  }

  /**
   * Gathering: a flush costs the engine about the same for one write as for sixteen, so the
   * writes of concurrent callers should share one. But callers answered by one flush come back
   * a few ms apart (each request is parsed and validated in turn): the first would find the
   * writer idle and be flushed alone while the rest queue behind it, and the callers would
   * settle into small cohorts taking turns. So when the last flush saw several callers, the
   * next waits until as many writes are queued, at most `maxGatherMs` and a quarter of the
   * last flush's time. A lone caller never waits.
   */
  private gathering(): boolean {
    if (this.gathered || this.concurrency <= 1 || this.queue.length >= this.concurrency) return false;
    const ms = Math.min(this.maxGatherMs, this.lastFlushMs / 4);
    if (ms < 1) return false;
    this.gatherTimer ??= setTimeout(() => {
      this.gatherTimer = undefined;
      this.gathered = true;
      this.schedule();
    }, ms);
    return true;
  }

  /** Starts the next flush when none runs and its writes are in. */
  private schedule(): void {
    if (this.flushing || this.queue.length === 0 || this.gathering()) return;
    const batch = this.takeBatch();
    this.gathered = false;
    this.flushing = true;
    const started = performance.now();
    void this.run(batch).finally(() => {
      this.lastFlushMs = performance.now() - started;
      this.concurrency = batch.length + this.queue.length;
      this.flushing = false;
      this.schedule();
    });
  }

  /** The queued writes of the next flush, in arrival order, up to `maxRows` (at least one). */
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
    await insertSpanRows(
      this.clickhouse,
      batch.flatMap((w) => w.rows),
    );
    const traceIds = new Map<string, Set<string>>();
    for (const w of batch) {
      const ids = traceIds.get(w.workspaceId) ?? new Set<string>();
      for (const id of w.traceIds) ids.add(id);
      traceIds.set(w.workspaceId, ids);
    }
    for (const [workspaceId, ids] of traceIds) await recomputeTraceSummaries(this.clickhouse, workspaceId, [...ids]);
  }

  private async run(batch: PendingWrite[]): Promise<void> {
    try {
      await this.flush(batch);
      for (const w of batch) w.resolve();
    } catch (error) {
      if (batch.length === 1 || isStoreUnavailable(error)) {
        for (const w of batch) w.reject(alone(error, batch.length === 1));
        return;
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
}

/**
 * Engine errors that say "later", not "never": the store is busy or short of something.
 * A write failing alone with any other engine error is refused for its data (400), so a
 * client never retries a payload that cannot succeed.
 */
const transientEngineErrors =
  /MEMORY_LIMIT|TOO_MANY|TIMEOUT|NETWORK|SOCKET|UNAVAILABLE|ABORTED|READONLY|NOT_ENOUGH_SPACE|KEEPER|REPLICA|QUOTA/;

function alone(error: unknown, isolated: boolean): unknown {
  if (!isolated || error instanceof AppError || isStoreUnavailable(error)) return error;
  const type = (error as { type?: unknown }).type;
  if (typeof type !== 'string' || transientEngineErrors.test(type)) return error;
  return new AppError('VALIDATION_ERROR', `The trace store refused this payload (${type}); it was not stored`, {
    issues: [{ path: 'body', message: `was refused by the trace store (${type})` }],
  });
}
