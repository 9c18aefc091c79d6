/**
 * When the writer's next flush may start (write-batcher.ts): the gathering wait without a log,
 * the rest between flushes and the retry delay with one. It holds the timers and the figures of
 * the last flush they are drawn from; the writer holds the writes. `start` is the writer's
 * scheduling, called when a timer ends (with `true` when a retry delay ended).
 */
export class FlushTiming {
  /** Callers writing at once, as the last flush saw them: the writes it carried and those queued when it ended. */
  private concurrency = 0;
  private lastFlushMs = 0;
  private lastFlushStarted = -Infinity;
  private gatherTimer: NodeJS.Timeout | undefined;
  /** The gathering wait of the next flush is over. */
  private gathered = false;
  private restTimer: NodeJS.Timeout | undefined;
  /** The wait before the next flush is retried, when one is due; and the last such wait, doubled at each failure in a row. */
  private retryMs = 0;
  private backoffMs = 0;

  constructor(
    private readonly options: {
      /** Writes wait for the flush (no log): the next flush gathers concurrent callers' writes. */
      gathers: boolean;
      maxGatherMs: number;
      minFlushIntervalMs: number;
    },
    private readonly start: (retry: boolean) => void,
  ) {}

  /** A write was queued, `queued` now waiting: the gathering wait ends once as many as the last flush saw are in. */
  arrived(queued: number): void {
    if (this.gatherTimer && queued >= this.concurrency) {
      clearTimeout(this.gatherTimer);
      this.gatherTimer = undefined;
      this.gathered = true;
    }
  }

  /** Whether the next flush waits (a timer then calls `start`), with `queued` writes in and `readWaiting` if a read waits. */
  waits(queued: number, readWaiting: boolean): boolean {
    return this.gathering(queued) || this.resting(readWaiting);
  }

  /**
   * Gathering (without a log): a flush costs the engine about the same for one write as for
   * sixteen, so the writes of concurrent callers should share one. But callers answered by one
   * flush come back a few ms apart (each request is parsed and validated in turn): the first
   * would find the writer idle and be flushed alone while the rest queue behind it, and the
   * callers would settle into small cohorts taking turns. So when the last flush saw several
   * callers, the next waits until as many writes are queued, at most `maxGatherMs` and a
   * quarter of the last flush's time. A lone caller never waits. With a log, callers do not
   * wait for flushes, so whatever arrives during one goes into the next.
   */
  private gathering(queued: number): boolean {
    if (!this.options.gathers || this.gathered || this.concurrency <= 1 || queued >= this.concurrency) return false;
    const ms = Math.min(this.options.maxGatherMs, this.lastFlushMs / 4);
    if (ms < 1) return false;
    this.gatherTimer ??= setTimeout(() => {
      this.gatherTimer = undefined;
      this.gathered = true;
      this.start(false);
    }, ms);
    return true;
  }

  /**
   * With a log, flushes start at most every `minFlushIntervalMs` unless a read waits, and after
   * a failure for the store's sake, only once the retry delay passed.
   */
  private resting(readWaiting: boolean): boolean {
    if (this.restTimer) return true;
    const wait =
      this.retryMs > 0 ? this.retryMs : readWaiting ? 0 : this.lastFlushStarted + this.options.minFlushIntervalMs - performance.now();
    if (wait < 1) return false;
    this.restTimer = setTimeout(() => {
      this.restTimer = undefined;
      const retrying = this.retryMs > 0;
      this.retryMs = 0;
      this.start(retrying);
    }, wait);
    return true;
  }

  /** Someone waits: the rest ends now, unless it waits to retry. */
  hurry(): void {
    if (this.restTimer && this.retryMs === 0) {
      clearTimeout(this.restTimer);
      this.restTimer = undefined;
    }
  }

  /** A flush starts now. */
  started(): void {
    this.gathered = false;
    this.lastFlushStarted = performance.now();
  }

  /** The flush started last ended, having carried `carried` writes with `queued` waiting after it. */
  ended(carried: number, queued: number): void {
    this.lastFlushMs = performance.now() - this.lastFlushStarted;
    this.concurrency = carried + queued;
  }

  /** A flush landed: the next failure waits the shortest delay again. */
  landed(): void {
    this.backoffMs = 0;
  }

  /**
   * A flush failed for the store's sake: the next waits a delay doubled at each failure in a row
   * (100 ms to 5 s). With `diskFull`, every 500 ms: the disk may have room again any moment,
   * and a try that finds it still full costs the engine little.
   */
  failed(diskFull = false): void {
    this.backoffMs = Math.min(5_000, Math.max(100, this.backoffMs * 2));
    this.retryMs = diskFull ? Math.min(this.backoffMs, 500) : this.backoffMs;
  }

  /** No flush starts after this. */
  stop(): void {
    clearTimeout(this.restTimer);
    this.restTimer = undefined;
  }
}
