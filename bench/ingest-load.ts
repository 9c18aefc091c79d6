/**
 * Load drivers of the ingest benchmark: concurrent clients that send request bodies until a
 * span count or a deadline, recording each request's latency.
 */

export interface LoadResult {
  spans: number;
  seconds: number;
  requests: number;
  latenciesMs: number[];
  /** Seconds from the last answer until every answered write was applied (counted in `seconds`). */
  applyingSeconds?: number;
  /** The writer's flushes during the shape: how many, their mean spans and ms, and the span insert's ms. */
  flushes?: { count: number; rows: number; ms: number; insertMs: number };
  /** The service thread's event loop delay during the shape, in ms. */
  loopDelay?: { p50: number; p99: number };
  /** The service's thread during the shape: its requests' own times and its collections (ingest-server.ts). */
  service?: import('./ingest-server.js').ThreadFigures;
  /** The service's peak resident set and JS heap size during the shape, until its writes were applied, in bytes. */
  peakRss?: number;
  peakHeap?: number;
  /** The write-ahead log's writes and syncs during the shape: how many, their mean ms. */
  logSyncs?: { count: number; ms: number };
}

export interface Load {
  clients: number;
  /** Spans in one request. */
  spansPerRequest: number;
  /** Stop after this many spans, or at the deadline, whichever comes first. */
  maxSpans: number;
  maxSeconds: number;
  /** Sends one request; throws when the answer is not a full success. */
  send(client: number, request: number): Promise<void>;
}

export async function drive(load: Load): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  let spans = 0;
  const started = performance.now();
  const deadline = started + load.maxSeconds * 1000;
  await Promise.all(
    Array.from({ length: load.clients }, async (_, client) => {
      while (spans + load.spansPerRequest <= load.maxSpans && performance.now() < deadline) {
        const request = next++;
        const sent = performance.now();
        await load.send(client, request);
        latenciesMs.push(performance.now() - sent);
        spans += load.spansPerRequest;
      }
    }),
  );
  return { spans, seconds: (performance.now() - started) / 1000, requests: latenciesMs.length, latenciesMs };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const median = (values: number[]) => percentile(values, 50);

/** Times `read` repeatedly until `stop()` says so (or `count` reads), one at a time. */
export async function sampleReads(read: () => Promise<void>, until: { count?: number; stop?: () => boolean }): Promise<number[]> {
  const times: number[] = [];
  while ((until.count === undefined || times.length < until.count) && !(until.stop?.() ?? false)) {
    const started = performance.now();
    await read();
    times.push(performance.now() - started);
  }
  return times;
}

/** Reads of the service: a GET that fails unless answered 200, its body read. */
export const serviceGet = (url: string, key: string) => (path: string) => async () => {
  const res = await fetch(`${url}${path}`, { headers: { 'x-api-key': key } });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  await res.arrayBuffer();
};

/** How many traces the workspace holds, as the list's first page counts them. */
export async function workspaceTraces(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/api/traces?limit=1`, { headers: { 'x-api-key': key } });
  if (res.status !== 200) throw new Error(`/api/traces answered ${res.status}`);
  return ((await res.json()) as { meta: { pagination: { total: number } } }).meta.pagination.total;
}

/**
 * A list then a trace read, a pair every `interval` ms (at once after a slower pair; 0: back to
 * back), until `stop()` says so: every read's time.
 */
export async function readPairs(
  reads: { list: () => Promise<void>; detail: () => Promise<void> },
  interval: number,
  stop: () => boolean,
): Promise<{ list: number[]; detail: number[] }> {
  const times = { list: [] as number[], detail: [] as number[] };
  while (!stop()) {
    const started = performance.now();
    times.list.push(...(await sampleReads(reads.list, { count: 1 })));
    times.detail.push(...(await sampleReads(reads.detail, { count: 1 })));
    const rest = started + interval - performance.now();
    if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
  }
  return times;
}
