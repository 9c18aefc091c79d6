/**
 * The loop of a worker over a queue table (the webhook outbox, the evaluator jobs): `concurrency`
 * lanes each take one item after another until `takeOne` finds none due, then the worker sleeps
 * `pollIntervalMs` (cut short by stop), and starts over. `beforeRound` runs first in each round
 * (an evaluator's scan for new targets); a round that fails is logged and the loop goes on.
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
  onRoundError: (error: unknown) => void;
}): QueueWorkerLoop {
  let running = false;
  /** Set by stop: lanes finish the item they hold and take no other. */
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

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
      } catch (error) {
        options.onRoundError(error);
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
