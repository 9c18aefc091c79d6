import type { Sql } from './postgres.js';

/** What a cache built on this one is given by its owner (the app's configuration). */
export interface CacheOptions {
  /** How long a value is reused at most, in ms; 0 reads PostgreSQL on every call. */
  ttlMs: number;
  /** Told once when this replica cannot LISTEN (it then reads PostgreSQL on every call). */
  onListenError?: (error: unknown) => void;
  now?: () => number;
}

export interface NotifiedCacheOptions extends CacheOptions {
  /** The channel a trigger notifies at the commit of any change to what the cache keeps. */
  channel: string;
  /** Keys kept at most; past it the longest kept is forgotten first. Default: no bound. */
  maxEntries?: number;
}

/** What every cache built on this one shows beside its reads. */
export interface CacheControls {
  /** Forgets every key: a change this replica made applies to its next call. */
  forget: () => void;
  /** Reads from PostgreSQL, and calls answered from memory, for the logs and the tests. */
  readonly counts: { reads: number; hits: number };
  /** Listens, if it does not yet (the first call does too): true once it listens, false if it cannot (or with `ttlMs` 0). */
  ready: () => Promise<boolean>;
}

export interface NotifiedCache<V> extends CacheControls {
  /**
   * The value of `key`: from memory when fresh, else from `read`, kept when the listener is up,
   * no notification came while it was read, and `keep` (if given) allows it.
   */
  get(key: string, read: () => Promise<V>, keep?: (value: V) => boolean): Promise<V>;
  /** True while the listener is subscribed: only then is memory used. */
  listening: () => boolean;
}

const caches = new WeakMap<Sql, { channel: string; forget: () => void }[]>();

/** Tells the caches of `sql` on `channel` that this replica changed what they keep, without waiting for its own notification. */
export function notifyChanged(sql: Sql, channel: string): void {
  for (const cache of caches.get(sql) ?? []) if (cache.channel === channel) cache.forget();
}

/**
 * Rows of PostgreSQL kept in memory and as exact as a read on every call (decision 082):
 *
 * - every replica LISTENs on `channel`, which triggers notify at the commit of any change to
 *   what is kept, whoever makes it (the service, the CLI, an operator's SQL); a notification
 *   forgets every key;
 * - memory is used only while the listener is subscribed, and forgotten each time it subscribes
 *   again (after a lost connection it may have missed a notification); a read that started
 *   before a notification is not kept;
 * - the replica that makes a change forgets at once (`notifyChanged`);
 * - `ttlMs` bounds how long any value is reused, whatever happens to the listener.
 *
 * Behind a pooler that cannot LISTEN (PgBouncer in transaction mode), set ttlMs to 0.
 */
export function createNotifiedCache<V>(sql: Sql, options: NotifiedCacheOptions): NotifiedCache<V> {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
  const kept = new Map<string, { value: V; at: number }>();
  /** Bumped by every notification and subscription: a read that saw another value is not kept. */
  let generation = 0;
  let listening = false;
  const counts = { reads: 0, hits: 0 };

  const forget = () => {
    generation += 1;
    kept.clear();
  };

  /** Subscribes at the first use, not when made: an app built without a database (the OpenAPI document) never connects. */
  let subscribed: Promise<boolean> | undefined;
  const ready = () =>
    (subscribed ??=
      options.ttlMs === 0
        ? Promise.resolve(false)
        : sql
            .listen(options.channel, forget, () => {
              forget();
              listening = true;
            })
            .then(
              () => true,
              (error: unknown) => {
                // Never listening: every call reads PostgreSQL, as without the cache.
                options.onListenError?.(error);
                return false;
              },
            ));

  const cache: NotifiedCache<V> = {
    counts,
    forget,
    ready,
    listening: () => listening,
    async get(key, read, keep) {
      void ready();
      const hit = kept.get(key);
      if (hit && listening && now() - hit.at < options.ttlMs) {
        counts.hits += 1;
        return hit.value;
      }
      const before = generation;
      counts.reads += 1;
      const value = await read();
      if (listening && generation === before && (keep?.(value) ?? true)) {
        kept.delete(key);
        if (kept.size >= maxEntries) kept.delete(kept.keys().next().value!);
        kept.set(key, { value, at: now() });
      }
      return value;
    },
  };
  caches.set(sql, [...(caches.get(sql) ?? []), { channel: options.channel, forget }]);
  return cache;
}
