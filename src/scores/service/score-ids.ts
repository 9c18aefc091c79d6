import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * The id of a score sent without one: a UUIDv7, whose first 48 bits are the time in ms. The ids
 * of one flush then sort after every id generated before, so the look-up of each inserted id's
 * earlier rows (clickhouse/0020, the summary's moved corrections) finds them in the last granules
 * of each part of `scores` (sorted by workspace and id) instead of in every granule of the table.
 *
 * The random bits come from a pool filled 256 ids at a time: the package's own source asks the
 * system for 16 bytes per id, a few microseconds each, milliseconds for a request of 1,000.
 */
const pool = new Uint8Array(16 * 256);
let used = pool.length;

function pooledRandom(): Uint8Array {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += 16;
  return pool.subarray(used - 16, used);
}

export const newScoreId = (): string => v7({ rng: pooledRandom });
