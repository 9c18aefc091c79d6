import type { Sql } from '../../stores/postgres.js';
import { keysByPrefix, type KeyRow } from '../tables/credentials-table.js';

/** The channel postgres/0008 notifies when anything authentication reads of a key or an organization changes. */
export const credentialsChannel = 'loupe_credentials';

export interface CredentialCacheOptions {
  /** How long a key's rows are reused at most, in ms; 0 reads PostgreSQL on every request. */
  ttlMs: number;
  /** Told once when this replica cannot LISTEN (it then reads PostgreSQL on every request). */
  onListenError?: (error: unknown) => void;
  now?: () => number;
}

export interface CredentialCache {
  /** The key rows of a public prefix (almost always one), from memory when they are fresh. */
  keysByPrefix(prefix: string): Promise<KeyRow[]>;
  /** Forgets every key: a change this replica made applies to its next request. */
  forget(): void;
  /** Reads from PostgreSQL, and requests answered from memory, for the logs and the tests. */
  readonly counts: { reads: number; hits: number };
  /** Listens, if it does not yet (the first read does too): true once it listens, false if it cannot (or with `ttlMs` 0). */
  ready(): Promise<boolean>;
}

const caches = new WeakMap<Sql, CredentialCache[]>();

/** Tells the caches of `sql` that this replica changed a key or an organization (tenants.ts). */
export function credentialsChanged(sql: Sql): void {
  for (const cache of caches.get(sql) ?? []) cache.forget();
}

/**
 * API keys kept in memory, so a request authenticates without a round trip to PostgreSQL
 * (under small ingest payloads that round trip cost more of the service's thread than
 * validating the payload). A key stays as exact as a read on every request:
 *
 * - every replica LISTENs on `loupe_credentials`, which triggers (postgres/0008) notify at
 *   the commit of any change to a key's scope, workspace, hash or revocation, or to its
 *   organization's plan or limits, whoever makes it (the service, the CLI, an operator's
 *   SQL); a notification forgets every key;
 * - memory is used only while the listener is subscribed, and forgotten each time it
 *   subscribes again (after a lost connection it may have missed a notification); a read that
 *   started before a notification is not kept;
 * - the replica that makes a change forgets at once (`credentialsChanged`), without waiting
 *   for its own notification;
 * - `ttlMs` bounds how long any row is reused, whatever happens to the listener;
 * - a prefix with no key is never kept: a key created on another replica works at once.
 *
 * Behind a pooler that cannot LISTEN (PgBouncer in transaction mode), set
 * LOUPE_CREDENTIAL_CACHE_MS=0.
 */
export function createCredentialCache(sql: Sql, options: CredentialCacheOptions): CredentialCache {
  const now = options.now ?? Date.now;
  const kept = new Map<string, { rows: KeyRow[]; at: number }>();
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
            .listen(credentialsChannel, forget, () => {
              forget();
              listening = true;
            })
            .then(
              () => true,
              (error: unknown) => {
                // Never listening: every request reads PostgreSQL, as without the cache.
                options.onListenError?.(error);
                return false;
              },
            ));

  const cache: CredentialCache = {
    counts,
    forget,
    ready,
    async keysByPrefix(prefix) {
      void ready();
      const hit = kept.get(prefix);
      if (hit && listening && now() - hit.at < options.ttlMs) {
        counts.hits += 1;
        return hit.rows;
      }
      const before = generation;
      counts.reads += 1;
      const rows = await keysByPrefix(sql, prefix);
      if (listening && generation === before && rows.length > 0) kept.set(prefix, { rows, at: now() });
      return rows;
    },
  };
  caches.set(sql, [...(caches.get(sql) ?? []), cache]);
  return cache;
}
