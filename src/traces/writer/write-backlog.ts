/**
 * The writer's bound on rows taken and not yet applied (write-batcher.ts, with a log): a write
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
