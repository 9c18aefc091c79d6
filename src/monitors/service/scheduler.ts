import type { MonitorEvaluator } from './evaluator.js';

export interface MonitorScheduler {
  start(): void;
  /** Stops the timer and waits for a round in flight. */
  stop(): Promise<void>;
}

/**
 * Runs an evaluation round every `intervalMs` (LOUPE_MONITOR_INTERVAL_MS; 0: never). Rounds
 * never overlap within a process; across processes the evaluator's conditional updates keep
 * each transition single.
 */
export function createMonitorScheduler(
  evaluator: MonitorEvaluator,
  intervalMs: number,
  log?: { error(obj: object, msg: string): void },
): MonitorScheduler {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const round = () => {
    if (running) return;
    running = evaluator
      .evaluateAll()
      .then(() => undefined)
      .catch((error: unknown) => log?.error({ err: error }, 'monitor evaluation round failed'))
      .finally(() => {
        running = undefined;
      });
  };
  return {
    start() {
      if (intervalMs === 0 || timer) return;
      timer = setInterval(round, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
