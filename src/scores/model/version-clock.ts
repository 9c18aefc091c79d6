/**
 * The versions of score rows: nanoseconds since the epoch, strictly increasing within one
 * clock, so a correction sent after a score always wins over it (ReplacingMergeTree keeps the
 * highest version of an id). One clock per app, made where the routes are registered.
 */
export class VersionClock {
  private last = 0n;
  next(): bigint {
    const now = BigInt(Date.now()) * 1_000_000n;
    this.last = now > this.last ? now : this.last + 1n;
    return this.last;
  }
}
