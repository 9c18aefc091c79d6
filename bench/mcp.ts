/**
 * What the MCP endpoint adds to a read: `npm run bench -- mcp [--calls 300] [--rounds 5] [--spans 50]`.
 *
 * One process holds the stores (embedded, in a temp directory) and the app. A trace of
 * `--spans` spans is read, alternately in rounds, as `GET /api/traces/:id/tree` (the REST call
 * the tool makes) and as a `get_trace` tool call through `POST /mcp` (a stateless MCP server and
 * transport per request, the in-process REST call, the bounded outline), both through
 * `app.inject`, one call at a time; and `tools/list`, the MCP layer alone (no read). The medians
 * of each round's mean are compared.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { benchWorkspaceKey, openBenchStores } from './bench-service.js';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const n = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
  return n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(args: string[]) {
  const calls = option(args, 'calls', 300);
  const rounds = option(args, 'rounds', 5);
  const spans = option(args, 'spans', 50);
  const { buildApp } = await import('../src/app.js');

  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-mcp-'));
  const { config, log, stores } = await openBenchStores(dir);
  try {
    const key = await benchWorkspaceKey(stores.postgres.sql, 'bench');
    const app = await buildApp({ config, sql: stores.postgres.sql, clickhouse: stores.clickhouse.client, log, consoleDir: false });
    const at = (ms: number) => new Date(Date.now() - 60_000 + ms).toISOString();
    const ingest = await app.inject({
      method: 'POST',
      url: '/api/traces',
      headers: { 'x-api-key': key },
      payload: {
        traces: [
          {
            traceId: 'bench-trace',
            source: 'sdk',
            spans: Array.from({ length: spans }, (_, i) => ({
              spanId: `s${i}`,
              ...(i === 0 ? {} : { parentSpanId: `s${Math.floor((i - 1) / 3)}` }),
              name: `step ${i}`,
              kind: i % 2 ? 'llm.chat' : 'tool',
              status: 'ok',
              startTime: at(i),
              endTime: at(i + 1),
              durationMs: 1,
              ...(i % 2 ? { model: 'gpt-4o', inputTokens: 10, outputTokens: 5 } : {}),
            })),
          },
        ],
      },
    });
    if (ingest.statusCode !== 200) throw new Error(ingest.body);

    const rest = () => app.inject({ method: 'GET', url: '/api/traces/bench-trace/tree', headers: { 'x-api-key': key } });
    const mcp = () =>
      app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'x-api-key': key, accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_trace', arguments: { traceId: 'bench-trace' } } },
      });
    const list = () =>
      app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'x-api-key': key, accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
    const check = async (send: () => ReturnType<typeof rest>, what: string) => {
      const res = await send();
      if (res.statusCode !== 200 || res.body.includes('"isError":true')) throw new Error(`${what}: ${res.body.slice(0, 300)}`);
    };
    const timeRound = async (send: () => ReturnType<typeof rest>, what: string) => {
      const started = performance.now();
      for (let i = 0; i < calls; i++) await check(send, what);
      return ((performance.now() - started) / calls) * 1000;
    };
    await timeRound(rest, 'REST'); // warm-up: JIT, the key in cache, the engine's caches
    await timeRound(mcp, 'MCP');
    await timeRound(list, 'MCP tools/list');
    const results = { rest: [] as number[], mcp: [] as number[], list: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      results.rest.push(await timeRound(rest, 'REST'));
      results.mcp.push(await timeRound(mcp, 'MCP'));
      results.list.push(await timeRound(list, 'MCP tools/list'));
    }
    await app.close();
    const restUs = median(results.rest);
    const mcpUs = median(results.mcp);
    console.log(`a trace of ${spans} spans, ${rounds} rounds of ${calls} sequential calls each, through app.inject`);
    console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'})`);
    console.log(
      `GET /api/traces/:id/tree:     ${restUs.toFixed(0)} µs a call (rounds: ${results.rest.map((r) => r.toFixed(0)).join(', ')})`,
    );
    console.log(`POST /mcp get_trace:          ${mcpUs.toFixed(0)} µs a call (rounds: ${results.mcp.map((r) => r.toFixed(0)).join(', ')})`);
    console.log(
      `POST /mcp tools/list:         ${median(results.list).toFixed(0)} µs a call, no read (rounds: ${results.list.map((r) => r.toFixed(0)).join(', ')})`,
    );
    console.log(`ratio MCP/REST: ${(mcpUs / restUs).toFixed(2)}; the MCP layer adds ${(mcpUs - restUs).toFixed(0)} µs a call`);
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
