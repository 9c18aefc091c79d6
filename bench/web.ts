/**
 * `npm run bench -- web`: the console in the real browser (the Chromium of @sparticuz/chromium,
 * driven by playwright-core) against the service (startServer, embedded stores, a temporary
 * LOUPE_DATA_DIR). Figures:
 * - navigation to an interactive trace page (tree rendered, a span selected, its panel shown)
 *   for traces of 100, 1,000 and 10,000 spans (median of `--runs`, default 5, a fresh page load each);
 * - navigation to a ready trace list (first page rendered);
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

export async function run(args: string[]) {
  const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) || 5 : 5;
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-web-'));
  const { loadConfig } = await import('../src/config.js');
  const { startServer } = await import('../src/server.js');
  const config = loadConfig({ LOUPE_DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', LOUPE_BOOTSTRAP_API_KEY: apiKey });
  const server = await startServer(config);
  const browser = await launchBrowser();
  try {
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
    const sizes = [100, 1_000, 10_000];
    for (const size of sizes) await post([bigTrace(`bench-${size}`, now - 3_600_000, size)]);
    for (let i = 0; i < 10; i++)
      await post(Array.from({ length: 100 }, (_, j) => agentTrace(`list-${i}-${j}`, now - (i * 100 + j) * 60_000)));

    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addInitScript((key) => sessionStorage.setItem('loupe.credential', JSON.stringify({ apiKey: key })), apiKey);
    const page = await context.newPage();
    const results: Array<[string, number, number[]]> = [];

    for (const size of sizes) {
      const times: number[] = [];
      for (let i = 0; i < runs + 1; i++) {
        await page.goto(`${server.url}/healthz`); // same origin: the page's process is reused, as when following a link
        const started = performance.now();
        await page.goto(`${server.url}/traces/bench-${size}`, { waitUntil: 'commit' });
        await page.locator('[role="treeitem"][aria-selected="true"]').waitFor();
        await page.getByRole('article', { name: /^Span / }).waitFor();
        // Interactive: a key press moves the selection and the panel follows.
        await page.getByRole('tree', { name: 'Spans' }).focus();
        await page.keyboard.press('ArrowDown');
        await page.getByRole('article', { name: 'Span step 1' }).waitFor();
        if (i > 0) times.push(performance.now() - started); // the first load warms the server's caches
      }
      results.push([`trace page, ${size.toLocaleString('en-US')} spans`, median(times), times]);
    }
    const listTimes: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      await page.goto(`${server.url}/healthz`); // same origin: the page's process is reused, as when following a link
      const started = performance.now();
      await page.goto(`${server.url}/traces`, { waitUntil: 'commit' });
      await page.locator('tbody tr[data-trace-id]').first().waitFor();
      if (i > 0) listTimes.push(performance.now() - started);
    }
    results.push(['trace list ready (1,003 traces stored)', median(listTimes), listTimes]);

    const floor: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await fetch(`${server.url}/api/traces/bench-10000`, { headers: { 'x-api-key': apiKey } }).then((r) => r.arrayBuffer());
      floor.push(performance.now() - started);
    }
    results.push(['(floor) GET /api/traces/:id, 10,000 spans, from Node', median(floor), floor]);

    const js = firstLoadJs();
    console.log('\n| measure | median ms | runs (ms) |\n|---|---:|---|');
    for (const [name, m, all] of results) console.log(`| ${name} | ${m.toFixed(0)} | ${all.map((t) => t.toFixed(0)).join(', ')} |`);
    console.log(
      `\nfirst-load JavaScript: ${js.files.join(', ')}: ${(js.bytes / 1024).toFixed(1)} KB, ${(js.gzipBytes / 1024).toFixed(1)} KB gzipped`,
    );
  } finally {
    await browser.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
