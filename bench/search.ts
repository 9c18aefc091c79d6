/**
 * Full-text search benchmark:
 * `npm run bench -- search [--spans 200000] [--calls 10] [--batch 5000] [--copies [--copy-batch 2]] [--no-optimize]
 * [--ingest-spans N [--rounds 3]]`.
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
 * With `--copies` the store is built inside the engine instead (search-copies.ts: a template of
 * 10,007 traces ingested, then copied with INSERT … SELECT), minutes for 10M spans where the
 * ingest takes over an hour; it says how that store differs from an ingested one.
 *
 * With `--ingest-spans N`, first the ingest rate of N spans with the text index against without
 * it: `--rounds` rounds each, alternating, each into emptied tables and until its merges are
 * done, by the wall clock and by CPU time (ingestCompare), goal ≥ 85%.
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

/** Waits until the engine runs no merge of this store (a round's parts settle, their index built). */
async function settle(client: BenchStore['client']) {
  for (;;) {
    const rows = await (
      await client.query({ query: 'SELECT count() AS n FROM system.merges WHERE database = currentDatabase()', format: 'JSONEachRow' })
    ).json<{ n: number | string }>();
    if (Number(rows[0]?.n ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The text index of `spans` (clickhouse/0015). */
const textIndexName = 'idx_detail_text';

const middle = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Ingest with the text index against without. Each round starts from empty trace tables
 * (TRUNCATE), so every round does the same work whatever ran before: it loads the spans into a
 * workspace of its own and waits for the merges they start (an index is built at insert and
 * rebuilt at every merge of a ReplacingMergeTree), timed by the wall clock and by the process's
 * CPU time (the engine runs in this process: its threads count, other processes' do not, so
 * the CPU figure holds under a shared machine's load). Rounds alternate without, with, with,
 * without, … (`rounds` of each); the figures are medians.
 */
async function ingestCompare(store: BenchStore, spans: number, rounds: number) {
  const traces = Math.floor(spans / spansPerTrace);
  const loaded = traces * spansPerTrace;
  const figures: Record<'with' | 'without', { wall: number[]; cpu: number[] }> = {
    with: { wall: [], cpu: [] },
    without: { wall: [], cpu: [] },
  };
  const { indexedText } = await import('../src/traces/tables/spans-table.js');
  const index = `${textIndexName} ${indexedText} TYPE text(tokenizer = splitByNonAlpha)`;
  let indexed = true;
  const order = Array.from({ length: rounds * 2 }, (_, i) => [false, true, true, false][i % 4]!);
  for (const [round, withIndex] of order.entries()) {
    for (const table of ['spans', 'traces', 'session_traces', 'user_traces'])
      await store.client.command({ query: `TRUNCATE TABLE ${table}` });
    if (withIndex !== indexed) {
      await store.client.command({
        query: withIndex ? `ALTER TABLE spans ADD INDEX ${index}` : `ALTER TABLE spans DROP INDEX ${textIndexName}`,
      });
      indexed = withIndex;
    }
    const cpu = process.cpuUsage();
    const started = performance.now();
    await store.load(traces, `bench-ingest-${round}`);
    await settle(store.client);
    const used = process.cpuUsage(cpu);
    const figure = figures[withIndex ? 'with' : 'without'];
    figure.wall.push(loaded / ((performance.now() - started) / 1000));
    figure.cpu.push(loaded / ((used.user + used.system) / 1e6));
  }
  for (const table of ['spans', 'traces', 'session_traces', 'user_traces'])
    await store.client.command({ query: `TRUNCATE TABLE ${table}` });
  if (!indexed) await store.client.command({ query: `ALTER TABLE spans ADD INDEX ${index}` });
  const list = (values: number[]) => values.map((r) => r.toFixed(0)).join(' / ');
  const ratio = (kind: 'wall' | 'cpu') => ((100 * middle(figures.with[kind])) / middle(figures.without[kind])).toFixed(0);
  console.log(
    `\nIngest of ${loaded.toLocaleString('en')} spans a round into emptied tables, merges settled, ${rounds} rounds each, medians:` +
      `\n- spans a second (wall clock): with the text index ${list(figures.with.wall)}, without ${list(figures.without.wall)}: ${ratio('wall')}% (goal >= 85%)` +
      `\n- spans a CPU second (this process, engine included): with ${list(figures.with.cpu)}, without ${list(figures.without.cpu)}: ${ratio('cpu')}%`,
  );
}

export async function run(args: string[]) {
  const spans = option(args, 'spans', 200_000);
  const calls = option(args, 'calls', 10);
  const batchSize = option(args, 'batch', 5000);
  const ingestSpans = args.includes('--ingest-spans') ? option(args, 'ingest-spans', 200_000) : 0;
  const rounds = option(args, 'rounds', 3);
  const copyBatch = option(args, 'copy-batch', 2);
  const store = await openStore(batchSize);
  try {
    if (ingestSpans > 0) await ingestCompare(store, ingestSpans, rounds);
    let stored = spans;
    if (args.includes('--copies')) {
      const { copyTemplate, templateTraces } = await import('./search-copies.js');
      const templateWorkspace = 'bench-search-template';
      const templateSeconds = await store.load(templateTraces, templateWorkspace);
      const copies = Math.max(1, Math.round(spans / (templateTraces * spansPerTrace)));
      const copySeconds = await copyTemplate(store.client, { templateWorkspace, workspaceId: store.workspaceId, copies, batch: copyBatch });
      stored = copies * templateTraces * spansPerTrace;
      console.error(
        `template of ${templateTraces * spansPerTrace} spans ingested in ${templateSeconds.toFixed(0)} s; ${copies} copies (${stored} spans) in ${copySeconds.toFixed(0)} s`,
      );
    } else {
      const seconds = await store.load(Math.floor(spans / spansPerTrace));
      console.error(`loaded ${spans} spans in ${seconds.toFixed(0)} s`);
    }
    // One part, as the 1M figures were taken; `--no-optimize` leaves the parts as the merges left them.
    const optimized = performance.now();
    if (args.includes('--no-optimize')) await settle(store.client);
    else await store.client.command({ query: 'OPTIMIZE TABLE spans FINAL' });
    console.error(
      `${args.includes('--no-optimize') ? 'merges settled' : 'OPTIMIZE TABLE spans FINAL'} in ${((performance.now() - optimized) / 1000).toFixed(0)} s`,
    );

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
    console.log(`\n| call (${stored.toLocaleString('en')} spans, first page) | median | hits | × unfiltered list |\n|---|---|---|---|`);
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
