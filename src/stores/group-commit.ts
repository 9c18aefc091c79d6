/**
 * Group commit of many small calls into few batch calls: calls of one key that arrive while a
 * batch is in flight wait and go together in the next batch (none waits for a timer), so under
 * load each round trip to a store carries many items and at rest each item goes at once.
 * `run` answers one result per item, in order; a batch that throws fails each of its items.
 */
export function groupCommit<I, O>(run: (key: string, items: I[]) => Promise<O[]>): (key: string, item: I) => Promise<O> {
  type Waiting = { item: I; resolve: (result: O) => void; reject: (error: unknown) => void };
  const pending = new Map<string, Waiting[]>();
  let flushing = false;
  const flush = async () => {
    flushing = true;
    while (pending.size > 0) {
      const groups = [...pending];
      pending.clear();
      await Promise.all(
        groups.map(async ([key, waiting]) => {
          try {
            const results = await run(
              key,
              waiting.map((w) => w.item),
            );
            waiting.forEach((w, i) => w.resolve(results[i]!));
          } catch (error) {
            for (const w of waiting) w.reject(error);
          }
        }),
      );
    }
    flushing = false;
  };
  return (key, item) =>
    new Promise<O>((resolve, reject) => {
      const waiting = pending.get(key);
      if (waiting) waiting.push({ item, resolve, reject });
      else pending.set(key, [{ item, resolve, reject }]);
      if (!flushing) void flush();
    });
}
