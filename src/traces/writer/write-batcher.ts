import { statfsSync } from 'node:fs';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { PendingRow, SpanRow } from '../tables/spans-table.js';
import { loggedWriteOf, spanTarget, type Flush, type PendingWrite, type WriteTarget } from './flush.js';
import { keepRefused, type IngestLog, type LoggedWrite } from './ingest-log.js';
import { alone, diskFullOf, ingestLogFailure, retryable, storeUnavailable, unavailable } from './write-errors.js';
import { isStoreUnavailable } from '../../http/requests/error-handler.js';

/**
 * The writer's batch constants, each the default of the option of the same name
 * (`WriteBatcherOptions`, where each is explained).
 */
/** Rows in one flush at most; the rest wait for the next. */
export const maxFlushRows = 8_000;
/** With a log: rows answered and not yet applied at most; a write past it waits for room. */
export const maxBacklogRows = 20_000;
/** Without a log: the longest a flush waits for concurrent callers' writes, in ms. */
export const maxGatherMs = 8;
/** After a failure for the store's sake, the first retry delay, in ms; doubled at each failure in a row up to the most. */
export const firstRetryMs = 100;
export const mostRetryMs = 5_000;
/** While the store's disk is full, the longest retry delay, in ms: the disk may have room again any moment. */
export const diskFullRetryMs = 500;

/** Whether the disk of `dir` has room for a write again (1 MiB, the most one line usually takes). */
function hasRoom(dir: string): boolean {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize >= 1024 * 1024;
  } catch {
    return false;
  }
}

/**
 * Group commit for ingestion. Concurrent ingest requests share one span insert and one summary
 * recompute per workspace, instead of one each: the engine's cost per statement (a new part,
 * a read of every part's index, the statement's analysis) is paid once per flush, and fewer,
 * larger parts leave less to merge. Writes that arrive during a flush go together into the
 * next one. Flushes run one at a time, which also keeps the summary versions of one process in
 * order.
 *
 * With a write-ahead log (the service's default, docs/decisions/105-the-write-path.md)
 * a write is answered once it is on disk in the log, and flushes carry whatever arrived
 * meanwhile, however many clients sent it. An answered write is still readable at once: every
 * read of trace data first waits for the writes of its workspace answered before it
 * (`readable`), or, for one trace, for that trace's writes only. Without a log each caller's
 * promise settles only after its spans and its traces' summaries are stored.
 *
 * The client is the writer's own (in the embedded engine a session of its own, so reads do not
 * wait behind a flush: stores/clickhouse.ts). Two writers flushing side by side on two sessions
 * were measured slower on 2 cores than one (docs/benchmarks.md). One is made per app with its
 * stores (server.ts, buildApp) and handed to the routes.
 *
 * Its methods read top to bottom as a write goes: `write` (logged, queued, answered), `enqueue`,
 * `schedule` (the next flush once none runs, timed by `FlushTiming` below), `takeBatch` (the
 * queue's head, up to `maxFlushRows`), `flush` (the target's: flush.ts), then the outcome:
 * `landed`, `later` (back to the head of the queue, retried after a delay) or `refuse` (kept
 * in `refused.jsonl`), each ending in `done` (the log's segments dropped, waiting reads
 * released). Then what reads ask of it (`readable`, `unapplied`) and its end (`close`). Its
 * state follows the class: the applied writes and the reads waiting for them, the backlog's
 * bound, the flush timing.
 */
export class WriteBatcher<Row = SpanRow, Pending extends { workspace_id: string } = PendingRow> {
  private queue: PendingWrite<Pending>[] = [];
  private flushing = false;
  /**
   * Writes taken and flushes run, for the logs, the tests and the benchmark: writes / flushes is
   * the batching; the rows and milliseconds of the flushes, the span inserts among them.
   */
  readonly counts = { writes: 0, flushes: 0, isolations: 0, refused: 0, retries: 0, flushedRows: 0, flushMs: 0, insertMs: 0 };
  private readonly maxRows: number;
  readonly log: IngestLog<Row> | undefined;
  /** What it stores (flush.ts, `WriteTarget`): spans and their summaries unless told otherwise. */
  private readonly target: WriteTarget<Row, Pending>;
  private readonly onRefused: WriteBatcherOptions['onRefused'];
  /** When the next flush may start (gathering, resting, retry delays). */
  private readonly timing: FlushTiming;
  /** Numbers without a log. */
  private seq = 0;
  /** What is applied, and the reads waiting for what is not. */
  private readonly applied: AppliedWrites;
  /** Rows queued or in a flush, against their bound. */
  private readonly backlog: WriteBacklog;
  /** The error of the last flush when the store was unavailable; cleared by the next flush that lands. */
  private failing: unknown;
  /**
   * The disk is full (docs/decisions/091-store-outages.md): the log could not take a write, or
   * the store could not take a flush; with since when. Cleared by the next append, or flush,
   * that succeeds.
   */
  private logFull: { reason: string; since: number } | undefined;
  private storeFull: { reason: string; since: number } | undefined;
  private readonly onTrouble: WriteBatcherOptions['onTrouble'];
  private closing = false;
  private isClosed = false;
  /** The last write of the flush under way. */
  private inFlight = 0;
  /** The writes of the flush under way; its statement under way (all of them, or one when isolating), as it fills it in (flush.ts). */
  private inFlightBatch: PendingWrite<Pending>[] = [];
  private underWay: Flush<Pending> | undefined;
  /** The newest version this writer applied: of a span, or of the summaries it computed. */
  private appliedVersion = 0n;

  constructor(
    /** The store it writes to: the writer's own client (its own session in the embedded engine). */
    readonly clickhouse: ClickHouseClient,
    options: WriteBatcherOptions<Row, Pending> = {},
  ) {
    // The default target is the spans'; a writer of other rows names its own.
    this.target = options.target ?? (spanTarget as unknown as WriteTarget<Row, Pending>);
    this.maxRows = options.maxRows ?? maxFlushRows;
    this.backlog = new WriteBacklog(options.maxBacklogRows ?? maxBacklogRows);
    this.log = options.log;
    this.timing = new FlushTiming(
      { gathers: !this.log, maxGatherMs: options.maxGatherMs ?? maxGatherMs, minFlushIntervalMs: options.minFlushIntervalMs ?? 0 },
      (retry) => this.schedule(retry),
    );
    this.onRefused = options.onRefused;
    this.onTrouble = options.onTrouble;
    this.applied = new AppliedWrites(this.log?.lastSeq ?? 0);
  }

  /** Whether `close` ended: no flush starts after it. */
  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Writes recovered from the log at start (ingest-log.ts), applied again in their order before
   * any new one; reads of their workspaces wait for them like for any answered write.
   */
  replay(writes: LoggedWrite<Row>[]): void {
    if (writes.length === 0) return;
    this.applied.reopenFrom(writes[0]!.seq);
    for (const write of writes) {
      // A flush may have stored its rows before the process stopped: its traces are read back.
      this.enqueue({ ...write, ...this.target.pendingOf(write.rows), maybeStored: true });
      this.applied.answered(write);
    }
  }

  /**
   * Stores one request's span rows and recomputes its traces' summaries, with the writes of
   * concurrent requests. Resolves once the write is durable: in the log, or without a log in
   * the engine.
   */
  async write(workspaceId: string, rows: Row[], traceIds: string[]): Promise<void> {
    if (!this.log) {
      return new Promise((resolve, reject) => {
        this.counts.writes += 1;
        this.enqueue({ seq: ++this.seq, workspaceId, ...this.target.pendingOf(rows), traceIds, caller: { resolve, reject } });
      });
    }
    if (this.closing) throw unavailable('The service is shutting down; retry shortly');
    // The store's disk is full: what space comes back goes to the writes already taken, not to new ones.
    if (this.storeFull) throw unavailable(`The trace store's disk is full; retry shortly`);
    while (this.backlog.full) {
      // The store cannot keep up, or is down: the client hears it rather than the backlog growing.
      if (this.failing !== undefined) throw storeUnavailable();
      await this.backlog.room();
    }
    this.counts.writes += 1;
    // Encoded once, here, for the log line and for the insert: a flush then joins its writes'
    // lines instead of encoding thousands of rows at once while requests wait.
    const pending = this.target.pendingOf(rows);
    const { seq, durable } = this.log.append({ workspaceId, traceIds, rows }, pending.lines);
    this.enqueue({ seq, workspaceId, ...pending, traceIds });
    try {
      await durable;
    } catch (error) {
      // Not acknowledged: the client retries, so it is not applied either (if it still waits).
      this.withdraw(seq);
      const failure = ingestLogFailure(error);
      if (failure.diskFull && !this.logFull) {
        this.logFull = { reason: `disk full: the ingest log cannot be written in ${this.log.dir} (${failure.code})`, since: Date.now() };
        this.onTrouble?.({ began: true, reason: this.logFull.reason, error });
      }
      throw unavailable(`The ingest log could not be written (${failure.code}); retry shortly`);
    }
    if (this.logFull) this.recovered('logFull');
    this.applied.answered({ seq, workspaceId, traceIds });
  }

  /** A write whose log line failed, taken back from the queue unless a flush carries it already. */
  private withdraw(seq: number): void {
    const at = this.queue.findIndex((w) => w.seq === seq);
    if (at === -1) return;
    const [write] = this.queue.splice(at, 1);
    this.backlog.release(write!.rows.length);
  }

  private enqueue(write: PendingWrite<Pending>): void {
    this.queue.push(write);
    this.backlog.add(write.rows.length);
    this.timing.arrived(this.queue.length);
    this.schedule();
  }

  /** Starts the next flush when none runs and its writes are in. */
  private schedule(retry = false): void {
    if (this.flushing || this.queue.length === 0 || this.isClosed) return;
    if (!retry && this.timing.waits(this.queue.length, this.applied.anyWaiting)) return;
    const batch = this.takeBatch();
    this.inFlight = batch.at(-1)!.seq;
    this.inFlightBatch = batch;
    this.flushing = true;
    this.timing.started();
    void this.run(batch).finally(() => {
      this.timing.ended(batch.length, this.queue.length);
      this.flushing = false;
      this.inFlightBatch = [];
      this.underWay = undefined;
      this.schedule();
    });
  }

  /** The queued writes of the next flush, in arrival order, up to `maxRows` (at least one). */
  private takeBatch(): PendingWrite<Pending>[] {
    let rows = 0;
    let count = 0;
    while (count < this.queue.length && (count === 0 || rows + this.queue[count]!.rows.length <= this.maxRows)) {
      rows += this.queue[count]!.rows.length;
      count += 1;
    }
    return this.queue.splice(0, count);
  }

  /** The next flush's writes to the engine, and what follows its outcome. */
  private run(batch: PendingWrite<Pending>[]): Promise<void> {
    return this.log ? this.applyLogged(batch) : this.applyAnswering(batch);
  }

  /** One flush of the writes given (the target's: flush.ts for spans): their versions raised, then the flush, its figures counted. */
  private async flush(batch: PendingWrite<Pending>[]): Promise<void> {
    this.counts.flushes += 1;
    const started = performance.now();
    const flush = this.target.flushOf(batch, this.appliedVersion);
    this.appliedVersion = flush.floor;
    this.underWay = flush;
    await this.target.apply(this.clickhouse, flush);
    this.counts.flushedRows += flush.rows.length;
    if (flush.version > this.appliedVersion) this.appliedVersion = flush.version;
    this.counts.insertMs += flush.insertMs;
    this.counts.flushMs += performance.now() - started;
  }

  /**
   * A flush of logged writes, whose callers were answered already. When the store is
   * unavailable or busy, the writes go back to the head of the queue and are tried again after
   * a growing delay (reads of their workspaces answer 503 meanwhile, and new writes once the
   * backlog is full). When the engine refuses the flush, each write is tried alone: the others
   * are stored, and one the engine refuses alone is kept in `refused.jsonl` beside the log and
   * reported, never dropped in silence.
   */
  private async applyLogged(batch: PendingWrite<Pending>[]): Promise<void> {
    try {
      await this.flush(batch);
      this.landed(batch);
      return;
    } catch (error) {
      if (retryable(error)) return this.later(batch, error);
      if (batch.length === 1) return this.refuse(batch[0]!, error);
    }
    this.counts.isolations += 1;
    for (let i = 0; i < batch.length; i += 1) {
      const w = batch[i]!;
      try {
        await this.flush([w]);
        this.landed([w]);
      } catch (single) {
        if (retryable(single)) return this.later(batch.slice(i), single);
        this.refuse(w, single);
      }
    }
  }

  /**
   * A flush of writes whose callers wait for it (no log): each caller hears the flush's outcome.
   * One request's data must never fail another's: when the engine refuses a flush of several,
   * each write is retried alone, and only the writes that fail alone hear of it (the upsert
   * makes a retry of rows that did land harmless). An unavailable store fails them all.
   */
  private async applyAnswering(batch: PendingWrite<Pending>[]): Promise<void> {
    try {
      await this.flush(batch);
      this.done(batch);
      for (const w of batch) w.caller?.resolve();
    } catch (error) {
      if (batch.length === 1 || isStoreUnavailable(error)) {
        this.done(batch);
        for (const w of batch) w.caller?.reject(alone(error, batch.length === 1));
        return;
      }
      this.counts.isolations += 1;
      for (const w of batch) {
        try {
          await this.flush([w]);
          w.caller?.resolve();
        } catch (single) {
          w.caller?.reject(alone(single, true));
        }
        this.done([w]);
      }
    }
  }

  /** With a log: the writes given are applied (the store answers again). */
  private landed(batch: PendingWrite<Pending>[]): void {
    this.failing = undefined;
    if (this.storeFull) this.recovered('storeFull');
    this.timing.landed();
    this.done(batch);
  }

  /** With a log: the store is unavailable or busy; the writes go back to the head of the queue. */
  private later(batch: PendingWrite<Pending>[], error: unknown): void {
    this.failing = error;
    this.counts.retries += 1;
    this.queue.unshift(...batch);
    const diskFull = diskFullOf(error);
    if (diskFull !== undefined && !this.storeFull) {
      this.storeFull = { reason: `disk full: the trace store cannot store the waiting ingest writes (${diskFull})`, since: Date.now() };
      this.onTrouble?.({ began: true, reason: this.storeFull.reason, error });
    }
    // Out of space, the flush is tried again every half second, so it lands as soon as there is room.
    this.timing.failed(diskFull !== undefined);
    this.applied.rejectWaiting(storeUnavailable());
    // Writers waiting for room look again: with the store down they hear 503 rather than wait.
    this.backlog.wake();
  }

  /** With a log: the engine refused this write alone; it is kept aside and reported. */
  private refuse(w: PendingWrite<Pending>, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    const keptIn = keepRefused(this.log!.dir, loggedWriteOf(w), message);
    this.counts.refused += 1;
    this.onRefused?.({ seq: w.seq, workspaceId: w.workspaceId, rows: w.rows.length, error: message, keptIn });
    this.done([w]);
  }

  /** The writes given (the head of the queue, in order) are applied or refused. */
  private done(batch: PendingWrite<Pending>[]): void {
    // The log first: a reader told the writes are applied finds their segments gone.
    if (this.log) void this.log.applied(batch.at(-1)!.seq).catch(() => undefined);
    this.applied.done(batch);
    this.backlog.release(batch.reduce((rows, w) => rows + w.rows.length, 0));
  }

  /**
   * Waits until the writes answered so far for the workspace are applied, or with `traceIds`
   * only those touching these traces. Resolves at once when none is pending (and always
   * without a log, whose writes are applied before they are answered).
   */
  readable(workspaceId: string, traceIds?: readonly string[]): Promise<void> | undefined {
    const seq = this.applied.pendingFor(workspaceId, traceIds);
    if (seq === undefined) return undefined;
    if (this.failing !== undefined) return Promise.reject(storeUnavailable());
    const applied = this.applied.waitFor(seq);
    this.hurry();
    return applied;
  }

  /** Someone waits: the next flush starts as soon as the one under way ends, unless it waits to retry. */
  private hurry(): void {
    this.timing.hurry();
    this.schedule();
  }

  /**
   * The workspace's writes not yet applied, as a read lays them over the store to see them
   * without waiting (pending-summaries.ts): the rows of the statement under way as it applies
   * them (its versions final), then the other writes in the order they will be applied, a
   * write a list, with the newest version applied so far, above which they will be raised.
   * Undefined when there is none; while the store is unavailable, the 503 a waiting read hears.
   */
  unapplied(workspaceId: string): UnappliedWrites<Pending> | undefined {
    if (this.applied.pendingFor(workspaceId) === undefined) return undefined;
    if (this.failing !== undefined) throw storeUnavailable();
    const through = this.applied.appliedThrough;
    const applying = this.underWay?.rows.filter((row) => row.workspace_id === workspaceId) ?? [];
    const underWay = new Set(this.underWay?.writes);
    const queued: Pending[][] = [];
    for (const w of [...this.inFlightBatch, ...this.queue]) {
      if (w.workspaceId === workspaceId && w.seq > through && !underWay.has(w)) queued.push(w.rows);
    }
    if (applying.length === 0 && queued.length === 0) return undefined;
    const flush = this.underWay;
    return {
      applying,
      queued,
      floor: this.appliedVersion,
      freshUnderWay: (traceId) => flush?.fresh.get(workspaceId)?.has(traceId) ?? false,
    };
  }

  /** Resolves once every write taken so far is applied (or refused and kept aside). */
  async settled(): Promise<void> {
    const last = Math.max(this.queue.at(-1)?.seq ?? 0, this.inFlight);
    if (last <= this.applied.appliedThrough || this.isClosed) return;
    const applied = this.applied.waitFor(last);
    this.hurry();
    await applied.catch(() => this.settled());
  }

  /**
   * Why ingest cannot store what it takes now (the disk is full), for `/healthz`; undefined when
   * it can. A full log is found free again when a write succeeds, or when its disk has room for
   * a write again.
   */
  trouble(): string | undefined {
    if (this.logFull && this.log && hasRoom(this.log.dir)) this.recovered('logFull');
    const reasons = [this.logFull?.reason, this.storeFull?.reason].filter(Boolean);
    return reasons.length > 0 ? reasons.join('; ') : undefined;
  }

  /** The disk had no room and has again: told once, with how long it lasted. */
  private recovered(which: 'logFull' | 'storeFull'): void {
    const trouble = this[which];
    this[which] = undefined;
    if (trouble) this.onTrouble?.({ began: false, reason: trouble.reason, ms: Date.now() - trouble.since });
  }

  /**
   * Stops taking writes and applies what is pending, for at most `timeoutMs`; the log keeps
   * whatever was not applied, for the next start. Returns whether everything was applied.
   */
  async close(timeoutMs = 10_000): Promise<boolean> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      this.settled().then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    // No flush starts after this; one under way ends on its own, and what it leaves stays in the log.
    this.isClosed = true;
    this.timing.stop();
    this.applied.rejectWaiting(unavailable('The service is shutting down; retry shortly'));
    await this.log?.close(drained && this.queue.length === 0);
    return drained;
  }
}

// What it tells reads, and its options.

/** A workspace's writes not yet applied (`WriteBatcher.unapplied`). */
export interface UnappliedWrites<Pending = PendingRow> {
  /** The rows of the statement under way, with the versions it applies them at. */
  applying: Pending[];
  /** The other writes' rows, in the order they will be applied, versions not yet raised. */
  queued: Pending[][];
  /** The newest version applied so far (the statement under way's included). */
  floor: bigint;
  /**
   * Whether the statement under way found the store holding no summary row of the trace, once
   * it has read the summaries (before it writes any): the store then holds of that trace only
   * what the statement writes, whose rows are in `applying`. False until then, and for a trace
   * it does not touch.
   */
  freshUnderWay?: (traceId: string) => boolean;
}

export interface WriteBatcherOptions<Row = SpanRow, Pending = PendingRow> {
  /** What it stores; default spans and their summaries (`spanTarget`). */
  target?: WriteTarget<Row, Pending>;
  /**
   * Rows in one flush at most (`maxFlushRows`, 8,000); the rest wait for the next. It bounds what one insert
   * holds in the engine's memory, apart from the backlog below (docs/benchmarks.md, seventh pass).
   */
  maxRows?: number;
  /** The longest a flush waits for concurrent callers' writes (see `FlushTiming`, gathering), in ms; 0: never. Without a log only. */
  maxGatherMs?: number;
  /**
   * The write-ahead log (ingest-log.ts). With it, a write is answered once it is in the log on
   * disk and applied to the engine afterwards; without it, once the engine stored it.
   */
  log?: IngestLog<Row>;
  /**
   * With a log: rows acknowledged and not yet applied at most (`maxBacklogRows`, 20,000); a write past it waits
   * for room. Each waits in memory as a row and its encoding. With flushes of up to 50,000 rows,
   * 20,000 cost the service ~250 MiB more at its peak under bulk ingest than 10,000 (the flushes
   * grew with it); with flushes of at most `maxRows`, the backlog absorbs a slow flush (a merge)
   * without holding clients back (docs/benchmarks.md, seventh pass).
   */
  maxBacklogRows?: number;
  /** With a log: the least time between the starts of two flushes, unless a read waits, in ms. */
  minFlushIntervalMs?: number;
  /** Where a write the engine refused alone is reported (the service's logger). */
  /**
   * Where the disk running full (the log or the store cannot take writes) is told, once when it
   * begins and once when it ends (`ms`: how long it lasted): the service's logger.
   */
  onTrouble?: (event: { began: boolean; reason: string; error?: unknown; ms?: number }) => void;
  onRefused?: (write: { seq: number; workspaceId: string; rows: number; error: string; keptIn: string }) => void;
}

// Its state: the writes applied and the reads waiting for them, the backlog, the flush timing.

/** An answered write, as reads wait for it: its number in the log, its workspace and traces. */
export interface AnsweredWrite {
  seq: number;
  workspaceId: string;
  traceIds: readonly string[];
}

/** Writes of one workspace not yet applied: the last one's number, and each trace's last. */
interface Unapplied {
  lastSeq: number;
  traces: Map<string, number>;
}

interface Waiter {
  seq: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Which answered writes are not yet applied, by workspace and by trace, and the reads waiting
 * for them (`WriteBatcher`). Writes are applied in the order of their numbers, so one number
 * says what is applied: every write up to `through`.
 */
export class AppliedWrites {
  private readonly unapplied = new Map<string, Unapplied>();
  private waiting: Waiter[] = [];

  constructor(
    /** Every write numbered up to this one is applied (or refused and kept aside). */
    private through: number,
  ) {}

  get appliedThrough(): number {
    return this.through;
  }

  /** Writes from `seq` on are to be applied again (the log's writes replayed at start). */
  reopenFrom(seq: number): void {
    this.through = Math.min(this.through, seq - 1);
  }

  /**
   * A write is answered: reads from now on wait for it (those that came before its answer need
   * not). Nothing to wait for when it was applied already.
   */
  answered(write: AnsweredWrite): void {
    if (write.seq <= this.through) return;
    let pending = this.unapplied.get(write.workspaceId);
    if (!pending) this.unapplied.set(write.workspaceId, (pending = { lastSeq: 0, traces: new Map() }));
    pending.lastSeq = Math.max(pending.lastSeq, write.seq);
    for (const id of write.traceIds) pending.traces.set(id, Math.max(pending.traces.get(id) ?? 0, write.seq));
  }

  /**
   * The write a read of the workspace must wait for, or with `traceIds` a read of these traces
   * only: the last one answered and not applied, if any.
   */
  pendingFor(workspaceId: string, traceIds?: readonly string[]): number | undefined {
    const pending = this.unapplied.get(workspaceId);
    if (!pending) return undefined;
    let seq = 0;
    if (traceIds) for (const id of traceIds) seq = Math.max(seq, pending.traces.get(id) ?? 0);
    else seq = pending.lastSeq;
    return seq > this.through ? seq : undefined;
  }

  /** Resolves once every write up to `seq` is applied. */
  waitFor(seq: number): Promise<void> {
    if (seq <= this.through) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiting.push({ seq, resolve, reject }));
  }

  get anyWaiting(): boolean {
    return this.waiting.length > 0;
  }

  /** The writes given, the next in order, are applied (or refused and kept aside). */
  done(writes: readonly AnsweredWrite[]): void {
    for (const w of writes) {
      this.through = Math.max(this.through, w.seq);
      const pending = this.unapplied.get(w.workspaceId);
      if (!pending) continue;
      for (const id of w.traceIds) if ((pending.traces.get(id) ?? Infinity) <= w.seq) pending.traces.delete(id);
      if (pending.lastSeq <= w.seq) this.unapplied.delete(w.workspaceId);
    }
    if (this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const waiter of waiting) {
      if (waiter.seq <= this.through) waiter.resolve();
      else this.waiting.push(waiter);
    }
  }

  /** Every waiting read hears `error` (the store is down, the service stops). */
  rejectWaiting(error: unknown): void {
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }
}

/**
 * The writer's bound on rows taken and not yet applied (`WriteBatcher`, with a log): a write
 * past it waits for room, so a store that cannot keep up is heard by clients instead of the
 * backlog growing in memory.
 */
export class WriteBacklog {
  private rows = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly maxRows: number) {}

  get full(): boolean {
    return this.rows >= this.maxRows;
  }

  /** Resolves once rows were released below the bound, or the writer asked waiters to look again (`wake`). */
  room(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  add(rows: number): void {
    this.rows += rows;
  }

  /** Rows applied or refused: waiters look again once the backlog is below its bound. */
  release(rows: number): void {
    this.rows -= rows;
    if (!this.full) this.wake();
  }

  wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}

/**
 * When the writer's next flush may start (`WriteBatcher`): the gathering wait without a log,
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
   * (`firstRetryMs` to `mostRetryMs`, 100 ms to 5 s). With `diskFull`, at most every `diskFullRetryMs` (500 ms): the disk may have room again any moment,
   * and a try that finds it still full costs the engine little.
   */
  failed(diskFull = false): void {
    this.backoffMs = Math.min(mostRetryMs, Math.max(firstRetryMs, this.backoffMs * 2));
    this.retryMs = diskFull ? Math.min(this.backoffMs, diskFullRetryMs) : this.backoffMs;
  }

  /** No flush starts after this. */
  stop(): void {
    clearTimeout(this.restTimer);
    this.restTimer = undefined;
  }
}
