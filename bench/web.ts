/**
 * `npm run bench -- web [--runs 5] [--preload-spans 20000]`: the console in the real browser
 * (the Chromium of @sparticuz/chromium, driven by playwright-core) against the service
 * (startServer, embedded stores, a temporary LOUPE_DATA_DIR). Figures:
 * - navigation to an interactive trace page (tree rendered, a span selected with its panel and
 *   its input and output loaded, an arrow key moving the selection) for traces of 100, 1,000 and
 *   10,000 spans, and of 10,000 spans with inputs and outputs (median of `--runs`, a fresh page
 *   load each);
 * - navigation to a ready trace list (first page rendered) over everything stored: the traces
 *   above, 1,000 small ones and `--preload-spans` spans of the query benchmark's traces (10
 *   spans each over the last 30 days) stored first through `storeTraces` (the ingest path
 *   minus HTTP); `--preload-spans 1000000` for the goal's size (a few minutes of loading);
 * - the API's own answers for the 10,000-span traces from Node, as floors, with their sizes;
 * - the gzipped size of the JavaScript the first load fetches (the entry and its preloads;
 *   the dashboard's charts and the prompt diff are separate chunks loaded on demand).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { launchBrowser } from '../test/support/browser.js';
import { agentTrace, bigTrace } from '../test/e2e/console-fixtures.js';
import { makeQueryTrace, spansPerTrace } from './query-data.js';

const apiKey = 'lpk_bench_web_key_0123456789abcdef0';
const dist = fileURLToPath(new URL('../web/dist/', import.meta.url));

function median(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The JS the entry page loads before anything is clicked: its module script and modulepreloads. */
function firstLoadJs(): { files: string[]; bytes: number; gzipBytes: number } {
  const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  let bytes = 0;
  let gzipBytes = 0;
  for (const file of files) {
    const content = readFileSync(path.join(dist, file));
    bytes += content.length;
    gzipBytes += gzipSync(content, { level: 9 }).length;
  }
  return { files, bytes, gzipBytes };
}

function parseOptions(args: string[]) {
  const value = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    const n = i >= 0 ? Number(args[i + 1]) : fallback;
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
    return n;
  };
  const options = { runs: value('runs', 5), preloadSpans: value('preload-spans', 20_000) };
  if (options.runs < 1) throw new Error('--runs must be at least 1');
  return options;
}

/**
 * Stores `spans` spans of the query benchmark's traces in the workspace through storeTraces, on
 * a second client of the server's own embedded engine (same directory and database).
 */
async function preload(dir: string, database: string, workspaceId: string, spans: number): Promise<number> {
  const { openClickhouse } = await import('../src/stores/clickhouse.js');
  const { storeTraces, traceIngestOf } = await import('../src/traces/ingest/ingest.js');
  const { WriteBatcher } = await import('../src/traces/writer/write-batcher.js');
  const store = await openClickhouse({ database, dataDir: dir });
  const writer = new WriteBatcher(store.client);
  const rangeEnd = Date.now() - 2 * 3600_000;
  const rangeMs = 30 * 86_400_000;
  const traces = Math.floor(spans / spansPerTrace);
  try {
    for (let loaded = 0; loaded < traces;) {
      const count = Math.min(5000, traces - loaded);
      await storeTraces(
        traceIngestOf(writer),
        workspaceId,
        Array.from({ length: count }, (_, i) => makeQueryTrace(loaded + i, rangeEnd - rangeMs, rangeMs)),
      );
      loaded += count;
      if (loaded % 50_000 === 0) console.error(`preloaded ${(loaded * spansPerTrace).toLocaleString('en-US')} spans`);
    }
  } finally {
    await store.close();
  }
  return traces * spansPerTrace;
}

export async function run(args: string[]) {
  const { runs, preloadSpans } = parseOptions(args);
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-web-'));
  const { loadConfig } = await import('../src/config.js');
  const { startServer } = await import('../src/server.js');
  const config = loadConfig({
    LOUPE_DATA_DIR: dir,
    PORT: '0',
    LOUPE_OTLP_GRPC_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    LOUPE_BOOTSTRAP_API_KEY: apiKey,
  });
  const server = await startServer(config);
  const browser = await launchBrowser();
  try {
    const me = (await (await fetch(`${server.url}/api/me`, { headers: { 'x-api-key': apiKey } })).json()) as {
      data: { workspaceId: string };
    };
    const loadStarted = performance.now();
    const preloaded = preloadSpans > 0 ? await preload(dir, config.CLICKHOUSE_DATABASE, me.data.workspaceId, preloadSpans) : 0;
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const post = async (traces: unknown[]) => {
      const res = await fetch(`${server.url}/api/traces`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ traces }),
      });
      const body = (await res.json()) as { data?: { accepted: number } };
      if (body.data?.accepted !== traces.length) throw new Error(`ingest failed: ${JSON.stringify(body).slice(0, 400)}`);
    };
    const now = Date.now();
    // The trace pages: traces of names and times only, and one of 10,000 spans whose chat and
    // tool spans carry their inputs and outputs (about 6 MB whole) as an agent's trace does.
    const pages = [
      { id: 'bench-100', spans: 100, label: '100 spans' },
      { id: 'bench-1000', spans: 1_000, label: '1,000 spans' },
      { id: 'bench-10000', spans: 10_000, label: '10,000 spans' },
      { id: 'bench-10000-io', spans: 10_000, label: '10,000 spans with inputs and outputs', payloads: true },
    ];
    for (const p of pages) await post([bigTrace(p.id, now - 3_600_000, p.spans, { payloads: p.payloads ?? false })]);
    let listSpans = 0;
    for (let i = 0; i < 10; i++) {
      const traces = Array.from({ length: 100 }, (_, j) => agentTrace(`list-${i}-${j}`, now - (i * 100 + j) * 60_000));
      listSpans += traces.reduce((sum, t) => sum + t.spans.length, 0);
      await post(traces);
    }
    const storedSpans = preloaded + listSpans + pages.reduce((sum, p) => sum + p.spans, 0);

    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addInitScript((key) => sessionStorage.setItem('loupe.credential', JSON.stringify({ apiKey: key })), apiKey);
    const page = await context.newPage();
    // Checked every animation frame: a locator's wait backs off to checks 100 and 500 ms apart,
    // which would round a page that renders in two steps (tree, then span) up to the next check.
    const shown = (selector: string) =>
      page.waitForFunction((s) => document.querySelector(s) !== null, selector, { polling: 'raf', timeout: 60_000 });
    const results: Array<[string, number, number[]]> = [];

    for (const p of pages) {
      const times: number[] = [];
      for (let i = 0; i < runs + 1; i++) {
        await page.goto(`${server.url}/healthz`); // same origin: the page's process is reused, as when following a link
        const started = performance.now();
        await page.goto(`${server.url}/traces/${p.id}`, { waitUntil: 'commit' });
        await shown('[role="treeitem"][aria-selected="true"]');
        // The panel with the whole span: a console that loads it on selection marks the panel
        // aria-busy until then (one that has it from the trace's answer has no such mark).
        await shown('article[aria-label^="Span "]:not([aria-busy="true"])');
        // Interactive: a key press moves the selection and the panel follows.
        await page.getByRole('tree', { name: 'Spans' }).focus();
        await page.keyboard.press('ArrowDown');
        await shown('article[aria-label="Span step 1"]:not([aria-busy="true"])');
        if (i > 0) times.push(performance.now() - started); // the first load warms the server's caches
      }
      results.push([`trace page, ${p.label}`, median(times), times]);
    }
    const listTimes: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      await page.goto(`${server.url}/healthz`); // same origin: the page's process is reused, as when following a link
      const started = performance.now();
      await page.goto(`${server.url}/traces`, { waitUntil: 'commit' });
      await shown('tbody tr[data-trace-id]');
      if (i > 0) listTimes.push(performance.now() - started);
    }
    const storedTraces = preloaded / spansPerTrace + 1000 + pages.length;
    results.push([
      `trace list ready (${storedSpans.toLocaleString('en-US')} spans, ${storedTraces.toLocaleString('en-US')} traces stored)`,
      median(listTimes),
      listTimes,
    ]);

    // The API alone, for the 10,000-span traces: the whole trace (what the console read before
    // the tree existed), its tree, and one span; a route this build lacks is left out.
    const floors = ['bench-10000', 'bench-10000-io'].flatMap((id): Array<[string, string]> => [
      [`GET /api/traces/:id (${id})`, `/api/traces/${id}`],
      [`GET /api/traces/:id/tree (${id})`, `/api/traces/${id}/tree`],
      [`GET /api/traces/:id/spans/:spanId (${id})`, `/api/traces/${id}/spans/s3`],
    ]);
    for (const [name, url] of floors) {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < runs + 1; i++) {
        const started = performance.now();
        const res = await fetch(`${server.url}${url}`, { headers: { 'x-api-key': apiKey } });
        bytes = (await res.arrayBuffer()).byteLength;
        if (res.status !== 200) break;
        if (i > 0) times.push(performance.now() - started);
      }
      if (times.length > 0) results.push([`(floor) ${name} from Node, ${(bytes / 1024).toFixed(0)} KB`, median(times), times]);
    }

    const js = firstLoadJs();
    console.log('\n| measure | median ms | runs (ms) |\n|---|---:|---|');
    for (const [name, m, all] of results) console.log(`| ${name} | ${m.toFixed(0)} | ${all.map((t) => t.toFixed(0)).join(', ')} |`);
    console.log(
      `\nfirst-load JavaScript: ${js.files.join(', ')}: ${(js.bytes / 1024).toFixed(1)} KB, ${(js.gzipBytes / 1024).toFixed(1)} KB gzipped`,
    );
    if (preloaded > 0)
      console.log(`preloading ${preloaded.toLocaleString('en-US')} spans took ${loadSeconds.toFixed(0)} s (storeTraces, in-process)`);
  } finally {
    await browser.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
