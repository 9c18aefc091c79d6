import type { Sql } from '../../stores/postgres.js';
import type { ScoreConfig } from '../api/config-schemas.js';
import { selectScoreConfigs, selectScoreConfigsByName } from '../tables/configs-table.js';

/** The channel postgres/0017 notifies when anything in `score_configs` changes. */
export const scoreConfigsChannel = 'loupe_score_configs';

/** Workspaces whose configs are kept at most; past it the longest kept is forgotten first. */
const maxWorkspaces = 10_000;

export interface ScoreConfigCacheOptions {
  /** How long a workspace's configs are reused at most, in ms; 0 reads PostgreSQL on every request. */
  ttlMs: number;
  /** Told once when this replica cannot LISTEN (it then reads PostgreSQL on every request). */
  onListenError?: (error: unknown) => void;
  now?: () => number;
}

export interface ScoreConfigCache {
  /** The workspace's configs of these names (archived ones too: they still validate), from memory when fresh. */
  byName(workspaceId: string, names: string[]): Promise<Map<string, ScoreConfig>>;
  /** Forgets every workspace's configs: a change this replica made applies to its next request. */
  forget(): void;
  /** Reads from PostgreSQL, and lookups answered from memory, for the tests. */
  readonly counts: { reads: number; hits: number };
  /** Listens, if it does not yet (the first lookup does too): true once it listens, false if it cannot (or with `ttlMs` 0). */
  ready(): Promise<boolean>;
}

const caches = new WeakMap<Sql, ScoreConfigCache[]>();

/** Tells the caches of `sql` that this replica changed a score config (configs.ts). */
export function scoreConfigsChanged(sql: Sql): void {
  for (const cache of caches.get(sql) ?? []) cache.forget();
}

/**
 * Score configs kept in memory per workspace, so score ingest validates a request's scores
 * without a round trip to PostgreSQL (under load that round trip took more of a request of
 * 1,000 scores than its validation). Exact as the API keys' cache is
 * (tenancy/service/credential-cache.ts, decision 082):
 *
 * - every replica LISTENs on `loupe_score_configs`, which a trigger (postgres/0017) notifies at
 *   the commit of any change to `score_configs`, whoever makes it; a notification forgets every
 *   workspace's configs;
 * - memory is used only while the listener is subscribed, and forgotten each time it subscribes
 *   again; a read that started before a notification is not kept;
 * - the replica that makes a change forgets at once (`scoreConfigsChanged`);
 * - `ttlMs` bounds how long any workspace's configs are reused, whatever happens to the listener.
 *
 * A workspace's configs are read whole (the list the console shows, a few dozen names), so a
 * name without a config is known too.
 */
export function createScoreConfigCache(sql: Sql, options: ScoreConfigCacheOptions): ScoreConfigCache {
  const now = options.now ?? Date.now;
  const kept = new Map<string, { configs: Map<string, ScoreConfig>; at: number }>();
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
            .listen(scoreConfigsChannel, forget, () => {
              forget();
              listening = true;
            })
            .then(
              () => true,
              (error: unknown) => {
                // Never listening: every lookup reads PostgreSQL, as without the cache.
                options.onListenError?.(error);
                return false;
              },
            ));

  const pick = (configs: Map<string, ScoreConfig>, names: string[]) => {
    const out = new Map<string, ScoreConfig>();
    for (const name of names) {
      const config = configs.get(name);
      if (config) out.set(name, config);
    }
    return out;
  };

  const cache: ScoreConfigCache = {
    counts,
    forget,
    ready,
    async byName(workspaceId, names) {
      if (names.length === 0) return new Map();
      void ready();
      const hit = kept.get(workspaceId);
      if (hit && listening && now() - hit.at < options.ttlMs) {
        counts.hits += 1;
        return pick(hit.configs, names);
      }
      counts.reads += 1;
      if (!listening) return selectScoreConfigsByName(sql, workspaceId, names);
      const before = generation;
      const all = await selectScoreConfigs(sql, workspaceId, true);
      const configs = new Map(all.map((config) => [config.name, config]));
      if (listening && generation === before) {
        kept.delete(workspaceId);
        if (kept.size >= maxWorkspaces) kept.delete(kept.keys().next().value!);
        kept.set(workspaceId, { configs, at: now() });
      }
      return pick(configs, names);
    },
  };
  caches.set(sql, [...(caches.get(sql) ?? []), cache]);
  return cache;
}
