import { Worker } from 'node:worker_threads';
import type { WorkspacePrice } from './cost/schemas.js';
import type { WorkspacePriceIndex } from './cost/workspace-prices.js';
import type { IngestBodyShape, PreparedBody } from './prepare-body.js';
import { versionClockOrigin } from './rows.js';

/** What the ingest thread starts with. */
export interface IngestThreadData {
  /** Its module, loaded by the entry (ingest-thread-entry.js). */
  module: string;
  /** The service thread's version clock (rows.ts), so both threads' versions share one clock. */
  versionOrigin: bigint;
}

/** One body to prepare, with its workspace's prices by number (and the list the first time), or null when pricing is off. */
export interface IngestJob {
  id: number;
  text: string;
  shape: IngestBodyShape;
  workspaceId: string;
  prices: { id: number; list?: WorkspacePrice[] } | null;
}

export type IngestReply =
  { ready: true } | { id: number; prepared: PreparedBody } | { id: number; missingPrices: true } | { id: number; error: string };

type Answer = Exclude<IngestReply, { ready: true }>;

/**
 * A thread of its own for native ingest bodies (docs/decisions/088-an-ingest-thread.md): it
 * parses, validates and makes the rows and their lines (prepare-body.ts), the work that took
 * most of the service thread's time under many small requests, while the service thread goes
 * on answering, reading and flushing. The service thread then only logs and queues the rows.
 *
 * Started by the first body, it takes bodies once it is ready; until then, and whenever it is
 * gone (it stopped, or a body made it fail), `prepare` answers undefined and the caller prepares
 * the body itself as before, so a body is never lost to the thread. A thread that stopped is
 * started again by a later body, at most once a second. One per process, like the ingest turns.
 */
export class IngestThread {
  private worker: Worker | undefined;
  private ready = false;
  private startedAt = Number.NEGATIVE_INFINITY;
  private nextId = 1;
  private readonly jobs = new Map<number, { resolve(answer: Answer): void; reject(error: Error): void }>();
  /** A number per version of a workspace's prices, and those the running thread holds. */
  private readonly priceIds = new WeakMap<WorkspacePriceIndex, number>();
  private nextPriceId = 1;
  private sent = new Set<number>();
  private readyWaiters: Array<{ resolve(): void; reject(error: Error): void }> = [];
  /** Bodies prepared on the thread, bodies it left to the caller, and threads started. */
  readonly counts = { prepared: 0, leftToCaller: 0, starts: 0 };

  /**
   * Prepares the body on the thread: its answer, rows and lines, or undefined when the thread
   * is not ready, failed on it, or left it to fastify's parser (not JSON of the right shape).
   * `prices` is undefined when pricing is off.
   */
  async prepare(
    text: string,
    shape: IngestBodyShape,
    workspaceId: string,
    prices: WorkspacePriceIndex | undefined,
  ): Promise<Extract<PreparedBody, { kind: 'prepared' }> | undefined> {
    const worker = this.readyWorker();
    if (!worker) return this.left();
    try {
      const job = { id: 0, text, shape, workspaceId, prices: prices === undefined ? null : this.priceRef(prices, false) };
      let answer = await this.send(worker, job);
      if ('missingPrices' in answer) answer = await this.send(worker, { ...job, prices: this.priceRef(prices!, true) });
      if (!('prepared' in answer) || answer.prepared.kind !== 'prepared') return this.left();
      this.counts.prepared += 1;
      return answer.prepared;
    } catch {
      return this.left();
    }
  }

  /** Starts the thread if none runs; resolves once it takes bodies, rejects if it stops first. */
  whenReady(): Promise<void> {
    if (this.ready) return Promise.resolve();
    const ready = new Promise<void>((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
    if (!this.worker) this.start();
    return ready;
  }

  /** Stops the thread under way, if any; a later body starts another (after a second). */
  async stop(): Promise<void> {
    await this.worker?.terminate();
  }

  private left(): undefined {
    this.counts.leftToCaller += 1;
    return undefined;
  }

  private readyWorker(): Worker | undefined {
    if (this.ready) return this.worker;
    if (!this.worker && performance.now() - this.startedAt >= 1_000) this.start();
    return undefined;
  }

  private start(): void {
    this.startedAt = performance.now();
    this.counts.starts += 1;
    const data: IngestThreadData = {
      module: new URL('./ingest-thread-worker.ts', import.meta.url).href,
      versionOrigin: versionClockOrigin(),
    };
    const worker = new Worker(new URL('./ingest-thread-entry.js', import.meta.url), { workerData: data, execArgv: [] });
    this.worker = worker;
    this.sent = new Set();
    worker.on('message', (reply: IngestReply) => {
      if ('ready' in reply) {
        this.ready = true;
        for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
        return;
      }
      const job = this.jobs.get(reply.id);
      this.jobs.delete(reply.id);
      if (!job) return;
      if ('error' in reply) job.reject(new Error(reply.error));
      else job.resolve(reply);
    });
    // An error in the thread ends it; its bodies go back to their callers.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.ready = false;
      const gone = new Error('the ingest thread stopped');
      for (const job of this.jobs.values()) job.reject(gone);
      this.jobs.clear();
      for (const waiter of this.readyWaiters.splice(0)) waiter.reject(gone);
    });
    // The thread never keeps the process alive (unref'd after its listeners, which ref it again).
    worker.unref();
  }

  private send(worker: Worker, job: IngestJob): Promise<Answer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.jobs.set(id, { resolve, reject });
      worker.postMessage({ ...job, id });
    });
  }

  /** The prices' number, with their list when the thread may not hold them yet (or `resend`). */
  private priceRef(prices: WorkspacePriceIndex, resend: boolean): { id: number; list?: WorkspacePrice[] } {
    let id = this.priceIds.get(prices);
    if (id === undefined) {
      id = this.nextPriceId++;
      this.priceIds.set(prices, id);
    }
    if (!resend && this.sent.has(id)) return { id };
    // The thread keeps at most 1,000 (ingest-thread-worker.ts); past that, lists are sent again.
    if (this.sent.size >= 1_000) this.sent.clear();
    this.sent.add(id);
    return { id, list: prices.prices };
  }
}

export const ingestThread = new IngestThread();
