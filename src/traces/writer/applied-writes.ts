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
 * for them (write-batcher.ts). Writes are applied in the order of their numbers, so one number
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
