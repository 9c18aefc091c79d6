import type { Options } from './ingest-options.js';
import { makeTrace, randomTraceId, spansPerTrace, summaryOf } from './ingest-data.js';
import { settleMerges } from './ingest-server.js';

/** Span rows and summary rows of `traces` traces as the bulk shape sends them, re-keyed per insert. */
async function rawRows(workspaceId: string, traces: number) {
  const { toSpanRows } = await import('../src/traces/ingest/ingest.js');
  const base = Date.parse('2025-06-01T12:00:00.000Z');
  const made = Array.from({ length: traces }, (_, i) => makeTrace(String(i).padStart(3, '0'), base + i * 1000));
  const spanRows = toSpanRows(workspaceId, made);
  const summaries = made.map((t) => summaryOf(workspaceId, t));
  return { spanRows, summaries };
}

/** Fills the store, then times the raw baseline; sends {preloadSeconds, spans, seconds}. */
export async function rawRole(options: Options) {
  const { openClickhouse, migrateClickhouse } = await import('../src/stores/clickhouse.js');
  const { nextVersion } = await import('../src/traces/model/version.js');
  const store = await openClickhouse({ database: 'loupe', dataDir: process.env.BENCH_DIR! });
  await migrateClickhouse(store.client, { database: 'loupe' });
  const insertBatches = async (
    workspaceId: string,
    spans: number,
    tracesPerInsert: number,
    writers: number,
    { seconds = Infinity, settings }: { seconds?: number; settings?: Record<string, number> } = {},
  ) => {
    const { spanRows, summaries } = await rawRows(workspaceId, tracesPerInsert);
    const batches = Math.ceil(spans / spansPerTrace / tracesPerInsert);
    let next = 0;
    let done = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        while (next < batches && performance.now() < deadline) {
          next++;
          const ids = new Map(summaries.map((s) => [s.trace_id, randomTraceId()]));
          const version = nextVersion().toString();
          await store.client.insert({
            table: 'spans',
            values: spanRows.map((r) => ({ ...r, trace_id: ids.get(r.trace_id)!, version })),
            format: 'JSONEachRow',
            clickhouse_settings: settings,
          });
          await store.client.insert({
            table: 'traces',
            values: summaries.map((r) => ({ ...r, trace_id: ids.get(r.trace_id)!, version })),
            format: 'JSONEachRow',
            clickhouse_settings: settings,
          });
          done++;
        }
      }),
    );
    return { spans: done * tracesPerInsert * spansPerTrace, seconds: (performance.now() - started) / 1000 };
  };
  const preload = options.preload > 0 ? await insertBatches('bench-preload', options.preload, 1000, 2) : { seconds: 0 };
  const settleSeconds = await settleMerges(store.client);
  const raw = await insertBatches('bench-raw', options.spans, 100, 4);
  // --small-inserts: the engine's own answer to many small inserts, beside the group commit.
  const small = options.smallInserts
    ? {
        sync: await insertBatches('bench-small', options.spans, 1, 16, { seconds: 20 }),
        async: await insertBatches('bench-small-async', options.spans, 1, 16, {
          seconds: 20,
          settings: { async_insert: 1, wait_for_async_insert: 1 },
        }),
      }
    : undefined;
  await store.close();
  process.send!({ preloadSeconds: preload.seconds, settleSeconds, ...raw, small }, () => process.exit(0));
}
