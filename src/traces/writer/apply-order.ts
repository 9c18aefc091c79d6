/**
 * The rows of writes, given in the order they are applied, with versions that follow that
 * order. A request's rows get their version when it is parsed (`toSpanRows`), and requests may
 * be parsed in another order than they are applied (write-batcher.ts: several await room or
 * the log at once). A summary keeps a field of an earlier payload only over spans older than
 * itself (summary.ts, keepEarlier), so a write must carry a newer version than every span and
 * summary applied before it (`floor`): one that does not is raised just above. Summaries take
 * the newest span version applied, not the clock (recompute.ts), so a write parsed while an
 * earlier flush ran is not older than its summaries. A write applied again from the log after
 * a crash starts from a lower floor and never gets a newer version than the first time, so it
 * never overrides what came after it (a later write, a delete, a repricing: those take the
 * clock, far above). Returns the rows and the new floor.
 */
export function inApplyOrder<Row extends { version: string }>(writes: readonly Row[][], floor: bigint): { rows: Row[]; floor: bigint } {
  const rows: Row[] = [];
  for (const write of writes) {
    const raised = new Map<string, string>();
    for (const row of write) {
      let version = raised.get(row.version);
      if (version === undefined) {
        const own = BigInt(row.version);
        version = (own > floor ? own : floor + 1n).toString();
        raised.set(row.version, version);
      }
      rows.push(version === row.version ? row : { ...row, version });
    }
    for (const version of raised.values()) if (BigInt(version) > floor) floor = BigInt(version);
  }
  return { rows, floor };
}
