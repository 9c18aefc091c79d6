/**
 * A pause for the thread's other work once every few milliseconds of a long computation on the
 * service's one thread (summarizing hundreds of traces in a flush or a list read): the returned
 * function resolves at once until `ms` passed since the last pause, then after the events
 * waiting (setImmediate), so ingest requests and reads go in between instead of waiting it out.
 */
export function inTurns(ms = 3): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < ms) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}

/**
 * Ingest work on the service's thread, one step per turn of the event loop. Without turns,
 * every request whose body finished arriving in one turn is parsed, validated and made into
 * rows there and then, one after the other, while a read that arrived with them (or the
 * engine's answer to one) waits for all of them. With turns, a step waits for the loop to
 * come round (setImmediate): between two steps the loop takes whatever arrived meanwhile, so a
 * read waits for at most one step of ingest work. Steps run in the order they asked for a turn.
 * One queue per app (its ingest, src/traces/ingest/ingest.ts), which the app's routes and the
 * gRPC server beside it share: the thread's work is what it orders.
 */
export class Turns {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;
  /** When the turn under way began: a long step compares against it (`pause`). */
  private turnBegan = performance.now();

  /** Resolves at the caller's turn; the caller's work up to its next `await` runs in it. */
  take(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.next);
      }
    });
  }

  /**
   * For a step that may run long (a body of many traces): once `ms` passed since the turn
   * began, a promise of the caller's next turn; undefined (go on) before that.
   */
  pause(ms = 2): Promise<void> | undefined {
    return performance.now() - this.turnBegan < ms ? undefined : this.take();
  }

  private readonly next = () => {
    this.scheduled = false;
    const resolve = this.waiting.shift();
    if (this.waiting.length > 0) {
      this.scheduled = true;
      setImmediate(this.next);
    }
    this.turnBegan = performance.now();
    resolve?.();
  };
}
