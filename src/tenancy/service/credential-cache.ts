import type { Sql } from '../../stores/postgres.js';
import { createNotifiedCache, notifyChanged, type CacheControls, type CacheOptions } from '../../stores/notified-cache.js';
import { keysByPrefix, type KeyRow } from '../tables/credentials-table.js';

/** The channel postgres/0008 notifies when anything authentication reads of a key or an organization changes. */
export const credentialsChannel = 'loupe_credentials';

/** `ttlMs`: how long a key's rows are reused at most; 0 reads PostgreSQL on every request. */
export type CredentialCacheOptions = CacheOptions;

export interface CredentialCache extends CacheControls {
  /** The key rows of a public prefix (almost always one), from memory when they are fresh. */
  keysByPrefix(prefix: string): Promise<KeyRow[]>;
}

/** Tells the caches of `sql` that this replica changed a key or an organization (tenants.ts). */
export function credentialsChanged(sql: Sql): void {
  notifyChanged(sql, credentialsChannel);
}

/**
 * API keys kept in memory, so a request authenticates without a round trip to PostgreSQL
 * (under small ingest payloads that round trip cost more of the service's thread than
 * validating the payload). A key stays as exact as a read on every request
 * (stores/notified-cache.ts): every replica LISTENs on `loupe_credentials`, which triggers
 * (postgres/0008) notify at the commit of any change to a key's scope, workspace, hash or
 * revocation, or to its organization's plan or limits, whoever makes it; the replica that makes
 * a change forgets at once (`credentialsChanged`); a prefix with no key is never kept, so a key
 * created on another replica works at once.
 *
 * Behind a pooler that cannot LISTEN (PgBouncer in transaction mode), set
 * LOUPE_CREDENTIAL_CACHE_MS=0.
 */
export function createCredentialCache(sql: Sql, options: CredentialCacheOptions): CredentialCache {
  const kept = createNotifiedCache<KeyRow[]>(sql, { ...options, channel: credentialsChannel });
  return {
    counts: kept.counts,
    forget: kept.forget,
    ready: kept.ready,
    keysByPrefix: (prefix) =>
      kept.get(
        prefix,
        () => keysByPrefix(sql, prefix),
        (rows) => rows.length > 0,
      ),
  };
}
