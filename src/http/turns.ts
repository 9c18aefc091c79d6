/**
 * A pause for the thread's other work once every few milliseconds of a long computation on the
 * service's one thread (summarizing hundreds of traces in a flush or a list read): the returned
 * function resolves at once until `ms` passed since the last pause, then after the events
 * waiting (setImmediate), so ingest requests and reads go in between instead of waiting it out.
 */
export function inTurns(ms = 3): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < ms) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
