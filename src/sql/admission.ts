import { AppError } from '../http/wire/errors.js';

/**
 * Which SQL query runs next on this instance, fair across organizations.
 *
 * At most `perOrganization` queries of one organization run at once, and at most `total` of all
 * organizations (the SQL session pool's size: each running query holds an engine session). A
 * query over either bound waits, at most `maxWaitMs`, then answers 429 with Retry-After. When a
 * query ends, the next to run is taken from the organizations in turn (round robin over those
 * with a query waiting and a place of their own free), first come first served within one, so
 * an organization holding its places with long queries delays only its own next ones: another
 * organization's query waits for the first place to free, never behind the first one's queue.
 * A waiting query whose client went away leaves the queue.
 */
export interface AdmissionLimits {
  perOrganization: number;
  total: number;
  maxWaitMs: number;
  /** Queries of one organization that may wait at once; more answer 429 at once. */
  maxWaitingPerOrganization: number;
}

interface Waiter {
  organizationId: string;
  admit: (release: () => void) => void;
  refuse: (error: Error) => void;
}

/** The reason a request's signal was aborted with, as an Error. */
function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('The request was given up');
}

export class SqlAdmission {
  readonly #running = new Map<string, number>();
  #runningTotal = 0;
  /** Waiting queries by organization, first come first; the map's order is the turn. */
  readonly #waiting = new Map<string, Waiter[]>();

  constructor(private readonly limits: AdmissionLimits) {}

  /** Resolves with the query's release once it may run; rejects with 429 past the wait, or the signal's reason. */
  admit(organizationId: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (!this.#queued(organizationId) && this.#hasPlace(organizationId)) return Promise.resolve(this.#start(organizationId));
    const queue = this.#waiting.get(organizationId) ?? [];
    if (queue.length >= this.limits.maxWaitingPerOrganization) return Promise.reject(this.#busy(organizationId));
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const list = this.#waiting.get(organizationId);
        const at = list?.indexOf(waiter) ?? -1;
        if (list && at >= 0) list.splice(at, 1);
        if (list?.length === 0) this.#waiting.delete(organizationId);
      };
      const onAbort = () => {
        leave();
        reject(abortReason(signal));
      };
      const waiter: Waiter = {
        organizationId,
        admit: (release) => {
          leave();
          resolve(release);
        },
        refuse: (error) => {
          leave();
          reject(error);
        },
      };
      const timer = setTimeout(() => waiter.refuse(this.#busy(organizationId)), this.limits.maxWaitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
      this.#waiting.set(organizationId, queue);
    });
  }

  /** Queries running now, all organizations (diagnostics, tests). */
  get running(): number {
    return this.#runningTotal;
  }

  #queued(organizationId: string): boolean {
    return (this.#waiting.get(organizationId)?.length ?? 0) > 0;
  }

  #hasPlace(organizationId: string): boolean {
    return this.#runningTotal < this.limits.total && (this.#running.get(organizationId) ?? 0) < this.limits.perOrganization;
  }

  #start(organizationId: string): () => void {
    this.#running.set(organizationId, (this.#running.get(organizationId) ?? 0) + 1);
    this.#runningTotal += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#running.get(organizationId) ?? 1) - 1;
      if (left <= 0) this.#running.delete(organizationId);
      else this.#running.set(organizationId, left);
      this.#runningTotal -= 1;
      this.#next();
    };
  }

  /** Starts waiting queries while places are free, one organization's turn after another's. */
  #next() {
    let started = true;
    while (started && this.#runningTotal < this.limits.total) {
      started = false;
      for (const [organizationId, queue] of this.#waiting) {
        if (!this.#hasPlace(organizationId) || queue.length === 0) continue;
        // This organization's turn is used: it goes to the back of the turn order.
        this.#waiting.delete(organizationId);
        if (queue.length > 1) this.#waiting.set(organizationId, queue);
        const waiter = queue[0]!;
        const release = this.#start(organizationId);
        waiter.admit(release);
        started = true;
        break;
      }
    }
  }

  #busy(organizationId: string): AppError {
    const running = this.#running.get(organizationId) ?? 0;
    return new AppError(
      'RATE_LIMITED',
      `The SQL queries running on this instance (${this.#runningTotal} of LOUPE_SQL_MAX_RUNNING = ${this.limits.total}, ${running} of this organization's LOUPE_SQL_MAX_CONCURRENT = ${this.limits.perOrganization}) left no place within ${this.limits.maxWaitMs} ms; retry shortly`,
      { limit: 'concurrency', variable: 'LOUPE_SQL_MAX_CONCURRENT', value: this.limits.perOrganization },
      { 'retry-after': '1' },
    );
  }
}
