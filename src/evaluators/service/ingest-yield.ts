import type { IngestActivity } from '../../contract/ingest-activity.js';

/**
 * Evaluation yields the trace store to external ingest (decision 107). The embedded engine runs
 * statements one after another, and every judged trace costs it a read, a score write and the
 * judge's own trace: a worker at full speed beside a busy ingest takes half of the engine's time
 * from it. While clients send traces (`busyAt` requests storing, or begun within the last second) the worker runs its
 * jobs in bursts (up to `burst` jobs started together, so they still share their reads and
 * writes) and rests after each for its length times (1 − share) / share, and its scan reads
 * `busyScanPages` pages per evaluator a round; once ingest is quiet it runs at full speed again.
 * The signal is external requests only, not the trace writer's backlog, which the judges' own
 * traces fill too.
 */
export interface IngestYieldOptions {
  /** External ingest requests (storing, or begun in the last second) at and above which evaluation yields. */
  busyAt: number;
  /** The share of the time evaluation keeps while yielding (0 < share ≤ 1). */
  share: number;
  /** Jobs a burst starts at most while yielding. */
  burst: number;
  /** The longest rest after a burst. */
  maxRestMs: number;
  /** Pages of targets a scan reads per evaluator a round while yielding. */
  busyScanPages: number;
}

export const defaultIngestYield: IngestYieldOptions = { busyAt: 1, share: 0.1, burst: 32, maxRestMs: 5_000, busyScanPages: 1 };

export interface IngestYield {
  /**
   * Asks to start a job: 0 when it may start now (it is counted until `finished`), else the
   * milliseconds to wait before asking again.
   */
  admit(): number;
  /** A job admitted (whether it found work or not) is over. */
  finished(): void;
  /** The pages a scan may read per evaluator this round, `full` when ingest is quiet. */
  scanPages(full: number): number;
}

/** How long a lane waits before asking again while a burst is under way (its end is not known). */
const BURST_POLL_MS = 20;

export function createIngestYield(
  activity: IngestActivity,
  options: IngestYieldOptions = defaultIngestYield,
  now: () => number = Date.now,
): IngestYield {
  const yielding = () => activity.recentRequests() >= options.busyAt;
  let running = 0;
  let burstStart: number | undefined;
  let started = 0;
  let restUntil = 0;
  return {
    admit() {
      const at = now();
      if (!yielding()) {
        running += 1;
        return 0;
      }
      if (at < restUntil) return restUntil - at;
      if (burstStart === undefined) {
        burstStart = at;
        started = 0;
      }
      if (started >= options.burst) return BURST_POLL_MS;
      started += 1;
      running += 1;
      return 0;
    },
    finished() {
      running = Math.max(0, running - 1);
      if (running > 0 || burstStart === undefined) return;
      // The burst is over: rest so that it was `share` of the time, while ingest stays busy.
      const at = now();
      const rest = ((at - burstStart) * (1 - options.share)) / options.share;
      restUntil = at + Math.min(options.maxRestMs, rest);
      burstStart = undefined;
    },
    scanPages(full) {
      return yielding() ? Math.min(full, options.busyScanPages) : full;
    },
  };
}
