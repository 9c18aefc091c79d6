/**
 * The loop of a worker over a queue table (the webhook outbox, the evaluator jobs): `concurrency`
 * lanes each take one item after another until `takeOne` finds none due, then the worker sleeps
 * `pollIntervalMs` (cut short by stop), and starts over. `beforeRound` runs first in each round
 * (an evaluator's scan for new targets); a round that fails is reported and the loop goes on:
 * the first failure of a streak at once, then one report a `failureReportMs` while rounds keep
 * failing (a store that is down fails every round), and `onRecovered` once a round succeeds again.
 * Every replica may run one: `takeOne` claims its item in the store, so workers never collide.
 */
export interface QueueWorkerLoop {
  start(): void;
  /** Stops polling and taking items, and waits for the items in flight. */
  stop(): Promise<void>;
  /** One round's lanes until nothing is due; the number of items taken. */
  runOnce(): Promise<number>;
}

export function createQueueWorkerLoop(options: {
  concurrency: number;
  pollIntervalMs: number;
  /** Takes and handles one due item; false when none is due. */
  takeOne: () => Promise<boolean>;
  beforeRound?: () => Promise<unknown>;
  /** `failedRounds`: the rounds failed in this streak so far, this one included. */
  onRoundError: (error: unknown, failedRounds: number) => void;
  onRecovered?: (failedRounds: number) => void;
  /** The least time between two reports of one streak of failures. Default 60,000. */
  failureReportMs?: number;
  now?: () => number;
}): QueueWorkerLoop {
  const failureReportMs = options.failureReportMs ?? 60_000;
  const now = options.now ?? Date.now;
  let running = false;
  /** Set by stop: lanes finish the item they hold and take no other. */
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let failedRounds = 0;
  let reportedAt = 0;

  async function runOnce(): Promise<number> {
    let count = 0;
    const lane = async () => {
      while (!stopping && (await options.takeOne())) count += 1;
    };
    await Promise.all(Array.from({ length: options.concurrency }, lane));
    return count;
  }

  async function run() {
    while (running) {
      try {
        await options.beforeRound?.();
        await runOnce();
        if (failedRounds > 0) options.onRecovered?.(failedRounds);
        failedRounds = 0;
      } catch (error) {
        failedRounds += 1;
        if (failedRounds === 1 || now() - reportedAt >= failureReportMs) {
          reportedAt = now();
          options.onRoundError(error, failedRounds);
        }
      }
      if (!running) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollIntervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      stopping = false;
      loop = run();
    },
    async stop() {
      running = false;
      stopping = true;
      wake?.();
      await loop;
      stopping = false;
      loop = undefined;
    },
    runOnce,
  };
}
