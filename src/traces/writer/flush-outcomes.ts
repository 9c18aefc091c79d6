import type { PendingWrite } from './flush.js';
import { alone, retryable } from './write-errors.js';
import { isStoreUnavailable } from '../../http/error-handler.js';

/** What the writer (write-batcher.ts) does with a flush's writes; the two ways below are made of these steps. */
export interface FlushSteps {
  /** One flush of the writes given. */
  flush(batch: PendingWrite[]): Promise<void>;
  /** The writer's counts: `isolations`, flushes that failed and whose writes were tried one at a time. */
  counts: { isolations: number };
  /** The writes given, the head of the queue in order, are applied or refused. */
  done(batch: PendingWrite[]): void;
  /** With a log: the writes given are applied (the store answers again). */
  landed(batch: PendingWrite[]): void;
  /** With a log: the store is unavailable or busy; the writes go back to the head of the queue. */
  later(batch: PendingWrite[], error: unknown): void;
  /** With a log: the engine refused this write alone; it is kept aside and reported. */
  refuse(write: PendingWrite, error: unknown): void;
}

/**
 * A flush of writes whose callers wait for it (no log): each caller hears the flush's outcome.
 * One request's data must never fail another's: when the engine refuses a flush of several,
 * each write is retried alone, and only the writes that fail alone hear of it (the upsert
 * makes a retry of rows that did land harmless). An unavailable store fails them all.
 */
export async function applyAnswering(steps: FlushSteps, batch: PendingWrite[]): Promise<void> {
  try {
    await steps.flush(batch);
    steps.done(batch);
    for (const w of batch) w.caller?.resolve();
  } catch (error) {
    if (batch.length === 1 || isStoreUnavailable(error)) {
      steps.done(batch);
      for (const w of batch) w.caller?.reject(alone(error, batch.length === 1));
      return;
    }
    steps.counts.isolations += 1;
    for (const w of batch) {
      try {
        await steps.flush([w]);
        w.caller?.resolve();
      } catch (single) {
        w.caller?.reject(alone(single, true));
      }
      steps.done([w]);
    }
  }
}

/**
 * A flush of logged writes, whose callers were answered already. When the store is
 * unavailable or busy, the writes go back to the head of the queue and are tried again after
 * a growing delay (reads of their workspaces answer 503 meanwhile, and new writes once the
 * backlog is full). When the engine refuses the flush, each write is tried alone: the others
 * are stored, and one the engine refuses alone is kept in `refused.jsonl` beside the log and
 * reported, never dropped in silence.
 */
export async function applyLogged(steps: FlushSteps, batch: PendingWrite[]): Promise<void> {
  try {
    await steps.flush(batch);
    steps.landed(batch);
    return;
  } catch (error) {
    if (retryable(error)) return steps.later(batch, error);
    if (batch.length === 1) return steps.refuse(batch[0]!, error);
  }
  steps.counts.isolations += 1;
  for (let i = 0; i < batch.length; i += 1) {
    const w = batch[i]!;
    try {
      await steps.flush([w]);
      steps.landed([w]);
    } catch (single) {
      if (retryable(single)) return steps.later(batch.slice(i), single);
      steps.refuse(w, single);
    }
  }
}
