/**
 * `npm run bench -- ingest --cost-compare [--spans 10000] [--clients 4] [--traces-per-request 100]`:
 * what pricing at ingest costs. LLM spans are sent without a cost (as OpenTelemetry
 * instrumentations send them) and ingested with pricing off and on, in one run, in the order
 * off, on, on, off twice; each round's spans/s and CPU time per span, and one span's pricing
 * timed alone.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillTraceIds, makeBodyTemplate, spansPerTrace } from './ingest-data.js';

const self = fileURLToPath(import.meta.url);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

interface Options {
  spans: number;
  clients: number;
  tracesPerRequest: number;
}

function parseOptions(args: string[]): Options {
  const value = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    const n = i >= 0 ? Number(args[i + 1]) : fallback;
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
    return n;
  };
  return { spans: value('spans', 10_000), clients: value('clients', 4), tracesPerRequest: value('traces-per-request', 100) };
}

/**
 * `--cost-compare`, in a child process (the engine binds its directory to one process): the
 * ingest path as the routes run it (`ingestTraces`: validation, pricing, rows, insert, summary
 * recompute; no HTTP, which would only dilute the difference) with pricing off and on, in the
 * order off, on, on, off, `clients` callers at a time. The workspace has prices (exact names
 * and regexes that miss gpt-4o-mini), so each span is looked up there before the built-in table.
 */
async function costRole(options: Options) {
  const { openClickhouse, migrateClickhouse } = await import('../src/stores/clickhouse.js');
  const { ingestTraces, traceIngestOf } = await import('../src/traces/ingest/ingest.js');
  const { priceSpan } = await import('../src/traces/cost/pricing.js');
  const { WorkspacePriceIndex } = await import('../src/traces/cost/workspace-prices.js');
  const { WriteBatcher } = await import('../src/traces/writer/write-batcher.js');
  type Book = NonNullable<NonNullable<Parameters<typeof traceIngestOf>[1]>['book']>;
  const store = await openClickhouse({ database: 'loupe', dataDir: process.env.BENCH_DIR! });
  await migrateClickhouse(store.client, { database: 'loupe' });
  const price = (i: number, model: string, matchType: 'exact' | 'regex') => ({
    id: `p${i}`,
    model,
    matchType,
    provider: null,
    inputPerMillion: 1,
    outputPerMillion: 2,
    cacheReadPerMillion: null,
    cacheWritePerMillion: null,
    validFrom: null,
    createdAt: new Date(2026, 0, 1 + i).toISOString(),
  });
  const index = new WorkspacePriceIndex([
    price(1, 'acme-large', 'exact'),
    price(2, 'acme-small', 'exact'),
    price(3, 'acme-.*', 'regex'),
    price(4, 'my-(fine|tuned)-.+', 'regex'),
  ]);
  const book = { forWorkspace: async () => index } as unknown as Book;
  const template = makeBodyTemplate(options.tracesPerRequest, true);
  const batches = Math.ceil(options.spans / spansPerTrace / options.tracesPerRequest);
  const writer = new WriteBatcher(store.client);
  const round = async (on: boolean) => {
    const ingest = traceIngestOf(writer, { enabled: on, book });
    let next = 0;
    let spans = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: options.clients }, async () => {
        while (next < batches) {
          next++;
          const { traces } = JSON.parse(fillTraceIds(template)) as { traces: unknown[] };
          const result = await ingestTraces(ingest, 'bench-cost', traces);
          if (result.accepted !== options.tracesPerRequest) throw new Error(`ingest failed: ${JSON.stringify(result.errors[0])}`);
          spans += options.tracesPerRequest * spansPerTrace;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { on, spans, seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
  };
  await round(true); // warm-up: JIT, the engine's first parts, the price matches
  const runs = [];
  for (const on of [false, true, true, false, false, true, true, false]) runs.push(await round(on));
  // The price of one span alone, over many calls: the built-in table behind a workspace miss.
  const llm = (JSON.parse(template) as { traces: Array<{ spans: Array<{ kind: string }> }> }).traces[0]!.spans.find(
    (s) => s.kind === 'llm.chat',
  )!;
  const calls = 200_000;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) priceSpan(llm as never, index);
  const microsPerSpan = ((performance.now() - t0) * 1000) / calls;
  const check = priceSpan(llm as never, index);
  await store.close();
  process.send!({ runs, microsPerSpan, check }, () => process.exit(0));
}

export async function run(args: string[]) {
  const options = parseOptions(args);
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-'));
  try {
    const result = await new Promise<{
      runs: Array<{ on: boolean; spans: number; seconds: number; cpuSeconds: number }>;
      microsPerSpan: number;
      check: unknown;
    }>((resolve, reject) => {
      let figure: any;
      const env = {
        BENCH_DIR: dir,
        BENCH_SPANS: String(options.spans),
        BENCH_CLIENTS: String(options.clients),
        BENCH_TPR: String(options.tracesPerRequest),
      };
      const proc = fork(self, ['--role', 'cost'], { env: { ...process.env, ...env }, execArgv: ['--import', 'tsx'], stdio: 'inherit' });
      proc.on('message', (message) => (figure = message));
      proc.on('exit', (code) => (code === 0 && figure ? resolve(figure) : reject(new Error(`cost run exited with ${code}`))));
    });
    const rate = (on: boolean) => {
      const picked = result.runs.filter((r) => r.on === on);
      return picked.reduce((n, r) => n + r.spans, 0) / picked.reduce((n, r) => n + r.seconds, 0);
    };
    /** CPU time of the ingesting process (the engine runs in it too) per span: less moved by other load than wall time. */
    const cpuPerSpan = (on: boolean) => {
      const picked = result.runs.filter((r) => r.on === on);
      return (1e6 * picked.reduce((n, r) => n + r.cpuSeconds, 0)) / picked.reduce((n, r) => n + r.spans, 0);
    };
    const [off, on] = [rate(false), rate(true)];
    const [cpuOff, cpuOn] = [cpuPerSpan(false), cpuPerSpan(true)];
    console.log(
      [
        `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${mib(totalmem())} RAM, Node ${process.version}`,
        ...result.runs.map(
          (r, i) =>
            `round ${i + 1}, pricing ${r.on ? 'on ' : 'off'}: ${r.spans} spans in ${r.seconds.toFixed(1)} s = ${Math.round(r.spans / r.seconds)} spans/s, ${((1e6 * r.cpuSeconds) / r.spans).toFixed(0)} µs CPU/span`,
        ),
        `pricing off: ${Math.round(off)} spans/s; on: ${Math.round(on)} spans/s; cost of pricing: ${((100 * (off - on)) / off).toFixed(1)}% of ingest throughput (goal <= 5%)`,
        `CPU per span: off ${cpuOff.toFixed(0)} µs, on ${cpuOn.toFixed(0)} µs: ${((100 * (cpuOn - cpuOff)) / cpuOff).toFixed(1)}% more`,
        `one LLM span priced alone: ${result.microsPerSpan.toFixed(2)} µs (workspace prices missed, then the built-in table): ${JSON.stringify(result.check)}`,
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--role')) {
  const options = {
    spans: Number(process.env.BENCH_SPANS),
    clients: Number(process.env.BENCH_CLIENTS),
    tracesPerRequest: Number(process.env.BENCH_TPR),
  };
  costRole(options).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
