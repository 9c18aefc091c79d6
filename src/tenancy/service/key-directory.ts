import type { Sql } from '../../stores/postgres.js';
import { hashApiKey, hashesEqual, keyPrefix } from '../model/keys.js';
import { liveKeyHashes } from '../tables/credentials-table.js';

export interface KeyDirectoryOptions {
  /** A miss reloads new keys at most this often, however many misses arrive. */
  refreshMs?: number;
  now?: () => number;
}

/**
 * The prefixes and hashes of the live API keys, in memory, to tell a guess from a key without
 * database work. Used only for client addresses over the failed-authentication limit
 * (authenticated.ts): there a key the directory does not know is answered at once, and a key
 * it knows still goes through the full lookup (so a revocation applies at once).
 *
 * Loaded on first use; a miss reads keys created since the last read, at most once per
 * `refreshMs` for all callers together, so a flood of guesses costs at most one small
 * query per interval. Revoked keys are dropped at the next full load (every 100
 * refreshes); until then they only go on to the lookup, which refuses them.
 */
export function createKeyDirectory(sql: Sql, options: KeyDirectoryOptions = {}) {
  const refreshMs = options.refreshMs ?? 1000;
  const now = options.now ?? Date.now;
  const byPrefix = new Map<string, Buffer[]>();
  /** created_at of the newest key read, as the database wrote it. */
  let newest: Date | undefined;
  let lastRead = Number.NEGATIVE_INFINITY;
  let reads = 0;
  /** The next read, shared by every caller waiting for it. */
  let next: Promise<void> | undefined;

  async function read() {
    const full = newest === undefined || reads % 100 === 0;
    // Keys committed late may carry an earlier created_at: a margin re-reads the last minute.
    const rows = await liveKeyHashes(sql, full ? undefined : new Date(newest!.getTime() - 60_000));
    if (full) byPrefix.clear();
    for (const row of rows) {
      const hash = Buffer.from(row.hash);
      const known = byPrefix.get(row.prefix) ?? [];
      if (!known.some((h) => hashesEqual(h, hash))) known.push(hash);
      byPrefix.set(row.prefix, known);
      if (newest === undefined || row.createdAt > newest) newest = row.createdAt;
    }
    newest ??= new Date(0);
    reads += 1;
  }

  function nextRead(): Promise<void> {
    if (!next) {
      const wait = Math.max(0, lastRead + refreshMs - now());
      next = new Promise<void>((resolve) => setTimeout(resolve, wait).unref()).then(() => {
        lastRead = now();
        next = undefined;
        return read();
      });
    }
    return next;
  }

  function knows(key: string): boolean {
    const hash = hashApiKey(key);
    return (byPrefix.get(keyPrefix(key)) ?? []).some((h) => hashesEqual(h, hash));
  }

  return {
    /** Whether `key` may be a live key: false means surely not (no database work under a flood). */
    async mayBeValid(key: string): Promise<boolean> {
      if (!/^[A-Za-z0-9_-]{20,200}$/.test(key)) return false;
      if (knows(key)) return true;
      // Unknown: wait for a read that starts after this call (so a key just created on another
      // replica is found), at most one read per refreshMs for all callers. Guesses are slowed
      // by up to refreshMs; a valid new key passes after that wait.
      await nextRead();
      return knows(key);
    },
  };
}

export type KeyDirectory = ReturnType<typeof createKeyDirectory>;
