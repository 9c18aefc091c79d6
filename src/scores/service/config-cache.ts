import type { Sql } from '../../stores/postgres.js';
import { createNotifiedCache, notifyChanged, type CacheControls, type CacheOptions } from '../../stores/notified-cache.js';
import type { ScoreConfig } from '../api/config-schemas.js';
import { selectScoreConfigs, selectScoreConfigsByName } from '../tables/configs-table.js';

/** The channel postgres/0017 notifies when anything in `score_configs` changes. */
export const scoreConfigsChannel = 'loupe_score_configs';

/** Workspaces whose configs are kept at most; past it the longest kept is forgotten first. */
const maxWorkspaces = 10_000;

/** `ttlMs`: how long a workspace's configs are reused at most; 0 reads PostgreSQL on every request. */
export type ScoreConfigCacheOptions = CacheOptions;

export interface ScoreConfigCache extends CacheControls {
  /** The workspace's configs of these names (archived ones too: they still validate), from memory when fresh. */
  byName(workspaceId: string, names: string[]): Promise<Map<string, ScoreConfig>>;
}

/** Tells the caches of `sql` that this replica changed a score config (configs.ts). */
export function scoreConfigsChanged(sql: Sql): void {
  notifyChanged(sql, scoreConfigsChannel);
}

/**
 * Score configs kept in memory per workspace, so score ingest validates a request's scores
 * without a round trip to PostgreSQL (under load that round trip took more of a request of
 * 1,000 scores than its validation). Exact as the API keys' cache is (stores/notified-cache.ts,
 * decision 082): every replica LISTENs on `loupe_score_configs`, which a trigger (postgres/0017)
 * notifies at the commit of any change to `score_configs`, whoever makes it; the replica that
 * makes a change forgets at once (`scoreConfigsChanged`).
 *
 * A workspace's configs are read whole (the list the console shows, a few dozen names), so a
 * name without a config is known too; while the listener is not up, only the names asked for
 * are read, and nothing is kept.
 */
export function createScoreConfigCache(sql: Sql, options: ScoreConfigCacheOptions): ScoreConfigCache {
  const kept = createNotifiedCache<Map<string, ScoreConfig>>(sql, { ...options, channel: scoreConfigsChannel, maxEntries: maxWorkspaces });

  const pick = (configs: Map<string, ScoreConfig>, names: string[]) => {
    const out = new Map<string, ScoreConfig>();
    for (const name of names) {
      const config = configs.get(name);
      if (config) out.set(name, config);
    }
    return out;
  };

  return {
    counts: kept.counts,
    forget: kept.forget,
    ready: kept.ready,
    async byName(workspaceId, names) {
      if (names.length === 0) return new Map();
      // Read whole only while memory may keep it: a read by name is never kept as the whole.
      const whole = kept.listening();
      const configs = await kept.get(
        workspaceId,
        async () =>
          whole
            ? new Map((await selectScoreConfigs(sql, workspaceId, true)).map((config) => [config.name, config]))
            : selectScoreConfigsByName(sql, workspaceId, names),
        () => whole,
      );
      return pick(configs, names);
    },
  };
}
