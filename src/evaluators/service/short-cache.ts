/**
 * Loads kept for a short time, so the jobs a worker runs at once share one read of what they all
 * need (an evaluator's version, a connection and its key, a judge prompt) instead of one read
 * each. The load in flight is shared too; a failed load is forgotten at once. At most `maxKeys`
 * entries: past it the cache starts over.
 */
export function shortCache<R>(ttlMs: number, now: () => number = Date.now, maxKeys = 1000) {
  const entries = new Map<string, { at: number; value: Promise<R> }>();
  return (key: string, load: () => Promise<R>): Promise<R> => {
    const entry = entries.get(key);
    if (entry && now() - entry.at < ttlMs) return entry.value;
    if (entries.size >= maxKeys) entries.clear();
    const value = load();
    entries.set(key, { at: now(), value });
    value.catch(() => {
      if (entries.get(key)?.value === value) entries.delete(key);
    });
    return value;
  };
}
