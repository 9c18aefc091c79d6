/**
 * Full-text search benchmark:
 * `npm run bench -- search [--spans 200000] [--calls 10] [--batch 5000] [--ingest-spans N]`.
 *
 * Starts the service on a temporary LOUPE_DATA_DIR (embedded stores), loads the query
 * benchmark's traces (query-data.ts) with realistic texts in their inputs and outputs (sentences
 * of a 2,000-word vocabulary; `account` in about half the texts and in a tool's name, so in
 * every trace; `zanzibarite` in one trace of 10,007), and times in the same run, through HTTP,
 * the unfiltered list's first page, a rare-word, a common-word and a two-word search's first
 * page (median of `--calls` after a warm-up); then the text index's size against the spans
 * table's (system.data_skipping_indices, system.parts). The issue's goals: ≤ 5× the unfiltered
 * list at 1M spans, ≤ 10× at 10M.
 *
 * With `--ingest-spans N`, first the ingest rate of N spans with the text index against without
 * it, alternating in the same store (the index dropped, then added again), goal ≥ 85%.
 */
import type { Trace } from '../src/traces/model/schemas.js';
import { startBenchService } from './bench-service.js';
import { makeQueryTrace, spansPerTrace } from './query-data.js';

const apiKey = 'bench-search-key-0123456789abcdef';
const dayMs = 24 * 3600_000;
const rareWord = 'zanzibarite';
const commonWord = 'account';
/** A word of the vocabulary (`kalo`) that, with the common word, is in about one trace in seven. */
const pairWord = 'kalo';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const value = Number(i >= 0 ? args[i + 1] : fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} takes a positive whole number`);
  return value;
}

/** A seeded sentence generator over a fixed vocabulary of made-up words. */
function sentences(seed: number) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'do', 'gu'];
  const word = (n: number): string => (n < 1 ? '' : syllables[n % 12]! + word(Math.floor(n / 12)));
  return (words: number) => {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(rand() < 0.03 ? commonWord : word(1 + Math.floor(rand() * 2000)));
    return out.join(' ');
  };
}

function withTexts(trace: Trace, n: number): Trace {
  const say = sentences(n * 31 + 7);
  return {
    ...trace,
    spans: trace.spans.map((span) => {
      if (span.input === undefined) return span;
      const output = `${say(40)}${n % 10_007 === 0 ? ` ${rareWord}` : ''}.\n${say(20)}`;
      return { ...span, input: { messages: [{ role: 'user', content: say(30) }] }, output: { text: output } };
    }),
  };
}

async function fetchOk(url: string): Promise<{ total: number }> {
  const res = await fetch(url, { headers: { 'x-api-key': apiKey } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${body.slice(0, 300)}`);
  return JSON.parse(body).meta.pagination;
}

async function median(url: string, calls: number): Promise<{ ms: number; total: number }> {
  const { total } = await fetchOk(url);
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await fetchOk(url);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)]!, total };
}

interface BenchStore {
  url: string;
  workspaceId: string;
  client: import('../src/stores/clickhouse.js').ClickHouseClient;
  load(traces: number, workspaceId?: string): Promise<number>;
  close(): Promise<void>;
}

/** The service on a fresh LOUPE_DATA_DIR, the bench organization's limits raised, and a loader of the search traces. */
async function openStore(batchSize: number): Promise<BenchStore> {
  const { storeTraces, traceIngestOf } = await import('../src/traces/ingest/ingest.js');
  const { WriteBatcher } = await import('../src/traces/writer/write-batcher.js');
  const { server, store, workspaceId: ownWorkspaceId, close } = await startBenchService('search', apiKey, { raiseLimits: true });
  const writer = new WriteBatcher(store.client);
  const rangeEnd = Date.now() - 3600_000;
  const rangeStart = rangeEnd - 30 * dayMs + 2 * 3600_000;
  return {
    url: server.url,
    workspaceId: ownWorkspaceId,
    client: store.client,
    /** Seconds to store the first `traces` search traces, a batch at a time, each waiting for its write. */
    async load(traces: number, workspaceId = ownWorkspaceId) {
      const started = performance.now();
      for (let loaded = 0; loaded < traces; loaded += batchSize) {
        const count = Math.min(batchSize, traces - loaded);
        const batch = Array.from({ length: count }, (_, i) =>
          withTexts(makeQueryTrace(loaded + i, rangeStart, rangeEnd - rangeStart), loaded + i),
        );
        await storeTraces(traceIngestOf(writer), workspaceId, batch);
      }
      return (performance.now() - started) / 1000;
    },
    close,
  };
}

/**
 * Ingest with the text index against without, in the same store (the engine embeds one store a
 * process), each round into a workspace of its own: without (the index dropped), with (added
 * again), with, without, so the table's growth and a load that changes during the run weigh on
 * both. The index is then built for every part again, as the migration left it.
 */
async function ingestCompare(store: BenchStore, spans: number) {
  const traces = Math.floor(spans / spansPerTrace);
  const rates: Record<'with' | 'without', number[]> = { with: [], without: [] };
  const { indexedText } = await import('../src/traces/tables/spans-table.js');
  const index = `idx_detail_text ${indexedText} TYPE text(tokenizer = splitByNonAlpha)`;
  let indexed = true;
  for (const [round, withIndex] of [false, true, true, false].entries()) {
    if (withIndex !== indexed) {
      await store.client.command({
        query: withIndex ? `ALTER TABLE spans ADD INDEX ${index}` : 'ALTER TABLE spans DROP INDEX idx_detail_text',
      });
      indexed = withIndex;
    }
    const seconds = await store.load(traces, `bench-ingest-${round}`);
    rates[withIndex ? 'with' : 'without'].push((traces * spansPerTrace) / seconds);
  }
  await store.client.command({ query: `ALTER TABLE spans ADD INDEX ${index}` });
  await store.client.command({ query: 'ALTER TABLE spans MATERIALIZE INDEX idx_detail_text SETTINGS mutations_sync = 2' });
  const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;
  const rate = (list: number[]) => list.map((r) => r.toFixed(0)).join(' / ');
  console.log(
    `\nIngest of ${(traces * spansPerTrace).toLocaleString('en')} spans a round: with the text index ${rate(rates.with)} spans/s, without ${rate(rates.without)}: ${((100 * mean(rates.with)) / mean(rates.without)).toFixed(0)}% (goal >= 85%).`,
  );
}

export async function run(args: string[]) {
  const spans = option(args, 'spans', 200_000);
  const calls = option(args, 'calls', 10);
  const batchSize = option(args, 'batch', 5000);
  const ingestSpans = args.includes('--ingest-spans') ? option(args, 'ingest-spans', 200_000) : 0;
  const store = await openStore(batchSize);
  try {
    if (ingestSpans > 0) await ingestCompare(store, ingestSpans);
    const seconds = await store.load(Math.floor(spans / spansPerTrace));
    console.error(`loaded ${spans} spans in ${seconds.toFixed(0)} s`);
    await store.client.command({ query: 'OPTIMIZE TABLE spans FINAL' });

    const base = `${store.url}/api/traces`;
    const list = await median(base, calls);
    const rare = await median(`${base}?q=${rareWord}`, calls);
    const common = await median(`${base}?q=${commonWord}`, calls);
    const twoWords = await median(`${base}?q=${commonWord}+${pairWord}`, calls);
    const sizes = await (
      await store.client.query({
        query: `SELECT
          (SELECT sum(data_compressed_bytes) FROM system.data_skipping_indices WHERE database = currentDatabase() AND table = 'spans' AND name = 'idx_detail_text') AS index_bytes,
          (SELECT sum(data_compressed_bytes) FROM system.parts WHERE database = currentDatabase() AND table = 'spans' AND active) AS table_bytes`,
        format: 'JSONEachRow',
      })
    ).json<{ index_bytes: string; table_bytes: string }>();
    const { index_bytes, table_bytes } = sizes[0]!;
    const mb = (bytes: string) => `${(Number(bytes) / 1e6).toFixed(1)} MB`;
    console.log(`\n| call (${spans.toLocaleString('en')} spans, first page) | median | hits | × unfiltered list |\n|---|---|---|---|`);
    for (const [name, figure] of [
      ['GET /api/traces (unfiltered)', list],
      [`GET /api/traces?q=${rareWord} (rare)`, rare],
      [`GET /api/traces?q=${commonWord} (common)`, common],
      [`GET /api/traces?q=${commonWord}+${pairWord} (two words, about 1 trace in 7)`, twoWords],
    ] as const) {
      console.log(`| ${name} | ${figure.ms.toFixed(1)} ms | ${figure.total} | ${(figure.ms / list.ms).toFixed(2)} |`);
    }
    console.log(
      `\nText index ${mb(index_bytes)} against the spans table's ${mb(table_bytes)} compressed (${((100 * Number(index_bytes)) / Number(table_bytes)).toFixed(1)}%).`,
    );
  } finally {
    await store.close();
  }
}
