let lastVersion = 0n;
const versionOrigin = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/**
 * Row versions: nanoseconds since the epoch on a monotonic clock, bumped by one when two
 * calls land on the same nanosecond, so every later ingest in this process wins and replicas
 * order by wall time.
 */
export function nextVersion(): bigint {
  const now = versionOrigin + process.hrtime.bigint();
  lastVersion = now > lastVersion ? now : lastVersion + 1n;
  return lastVersion;
}
