/**
 * The list's statement alone: `npm run bench -- list-statement [--traces 100000] [--pending 500]
 * [--parts 13] [--calls 30]`.
 *
 * What a GET /api/traces under ingest asks of the engine, without the load that blurs it
 * (docs/benchmarks.md): one workspace's `--traces` summaries in `traces`, then the first page of
 * the newest-first list with its count (selectTracePage) timed, the median of `--calls`, over the
 * stored summaries alone and over an overlay of `--pending` summaries of unapplied writes (the
 * list under ingest, unapplied-pages.ts: laid over by the engine, or merged by the service for the
 * newest-first list without a filter: the keys statement then the stored page, or the keys
 * statement alone when the pending traces are the newest); first with the table merged into one part, then with
 * merges stopped and small inserts adding parts up to `--parts` active ones, as a sustained
 * ingest keeps them (3 to 13 in `npm run bench -- ingest --sustain 300`). It also times the key
 * read of the pending traces (selectPreviousSummaries), which the list runs first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ClickHouseClient } from '../src/stores/clickhouse.js';
import type { TraceSummaryRow } from '../src/traces/tables/traces-table.js';
import { makeTrace, randomTraceId, summaryOf } from './ingest-data.js';
import { median, sampleReads } from './ingest-load.js';

interface Options {
  traces: number;
  pending: number;
  parts: number;
  calls: number;
}

function parseOptions(args: string[]): Options {
  const value = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    const n = i >= 0 ? Number(args[i + 1]) : fallback;
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive whole number`);
    return n;
  };
  return { traces: value('traces', 100_000), pending: value('pending', 500), parts: value('parts', 13), calls: value('calls', 30) };
}

const workspaceId = 'bench-list';

/** The median of `calls` calls of `read`, one at a time, after one to warm up. */
async function medianOf(calls: number, read: () => Promise<unknown>): Promise<number> {
  await read();
  return median(await sampleReads(async () => void (await read()), { count: calls }));
}

async function activeParts(clickhouse: ClickHouseClient): Promise<number> {
  const result = await clickhouse.query({
    query: "SELECT count() AS parts FROM system.parts WHERE active AND database = currentDatabase() AND table = 'traces'",
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ parts: number }>())[0]?.parts ?? 0);
}

export async function run(args: string[]) {
  const options = parseOptions(args);
  const { openClickhouse, migrateClickhouse } = await import('../src/stores/clickhouse.js');
  const { nextVersion } = await import('../src/traces/model/version.js');
  const { insertTraceSummaries, selectPreviousSummaries } = await import('../src/traces/tables/traces-table.js');
  const { overlayOf, selectNewestStored, selectNewestStoredKeys, selectTracePage } = await import('../src/traces/tables/traces-table.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-list-'));
  const store = await openClickhouse({ database: 'loupe', dataDir: dir });
  try {
    await migrateClickhouse(store.client, { database: 'loupe' });
    const base = Date.parse('2025-06-01T12:00:00.000Z');
    // Summary rows as the bulk shape's traces give them; only the columns a list reads matter here.
    const summary = (i: number): TraceSummaryRow => {
      const trace = makeTrace(String(i % 1000).padStart(3, '0'), base + i * 1000);
      return {
        ...summaryOf(workspaceId, trace),
        trace_id: randomTraceId(),
        service: '',
        user_id: '',
        tags: [],
        cost_provided: 0,
        cost_computed: 0.00048,
        unpriced_spans: 0,
        item: '{}',
        by_model: [],
        by_provider: [],
        by_kind: [],
        ttfts: [],
        version: nextVersion().toString(),
      };
    };
    for (let done = 0; done < options.traces; done += 5000) {
      const count = Math.min(5000, options.traces - done);
      await insertTraceSummaries(
        store.client,
        Array.from({ length: count }, (_, i) => summary(done + i)),
      );
    }
    await store.client.command({ query: 'OPTIMIZE TABLE traces FINAL' });
    const pending = Array.from({ length: options.pending }, (_, i) => summary(options.traces + i));
    const { overlay } = overlayOf(
      pending.map((row) => row.trace_id),
      pending,
    )!;
    const page = { workspaceId, filter: {}, sort: '-startTime' as const, fetch: 51, offset: 0 };
    const lines = [`${options.traces} summaries in one workspace, a page of 50, the median of ${options.calls} calls:`];
    const measure = async () => {
      const parts = await activeParts(store.client);
      const stored = await medianOf(options.calls, () => selectTracePage(store.client, { ...page, count: true }));
      const over = await medianOf(options.calls, () => selectTracePage(store.client, { ...page, overlay, count: true }));
      const keyRead = await medianOf(options.calls, () => selectPreviousSummaries(store.client, { workspaceId, traceIds: overlay.ids }));
      const pendingIds = overlay.ids;
      const keys = await medianOf(options.calls, () => selectNewestStoredKeys(store.client, { workspaceId, pendingIds }));
      const merged = await medianOf(options.calls, async () => {
        await selectNewestStoredKeys(store.client, { workspaceId, pendingIds });
        await selectNewestStored(store.client, { workspaceId, pendingIds, reach: 51 });
      });
      lines.push(
        `  ${String(parts).padStart(2)} active parts: page and count ${stored.toFixed(1)} ms; over ${options.pending} pending traces, laid over by the engine ${over.toFixed(1)} ms (${(over / stored).toFixed(1)}x) after their key read ${keyRead.toFixed(1)} ms, merged by the service ${merged.toFixed(1)} ms (${(merged / stored).toFixed(1)}x), or ${keys.toFixed(1)} ms (${(keys / stored).toFixed(1)}x) when the pending traces are the newest`,
      );
    };
    await measure();
    await store.client.command({ query: 'SYSTEM STOP MERGES traces' });
    for (let part = 1; part < options.parts; part++) {
      await insertTraceSummaries(
        store.client,
        Array.from({ length: 250 }, (_, i) => summary(options.traces + options.pending + part * 250 + i)),
      );
    }
    await measure();
    console.log(lines.join('\n'));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
