import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openClickhouse, migrateClickhouse } from '../src/stores/clickhouse.js';
import { toSpanRows } from '../src/traces/rows.js';
import { insertSpanRows, recomputeTraceSummaries } from '../src/traces/queries.js';
import { makeTrace, randomTraceId } from './ingest-data.js';

const preload = Number(process.argv[2] ?? 200_000);
const dir = mkdtempSync(path.join(tmpdir(), 'probe-'));
const store = await openClickhouse({ database: 'loupe', dataDir: dir });
const ch = store.client;
await migrateClickhouse(ch, { database: 'loupe' });
const ws = 'ws';
const base = Date.parse('2025-06-01T12:00:00.000Z');
for (let done = 0; done < preload; done += 1000) {
  const traces = Array.from({ length: 100 }, (_, i) => makeTrace(randomTraceId(), base + i * 1000));
  await insertSpanRows(ch, toSpanRows(ws, traces));
  await recomputeTraceSummaries(ch, ws, traces.map((t) => t.traceId));
}
await ch.command({ query: 'OPTIMIZE TABLE spans FINAL' });
await ch.command({ query: 'OPTIMIZE TABLE traces FINAL' });
const cpu = async (fn: () => Promise<unknown>) => { const c = process.cpuUsage(); const s = performance.now(); await fn(); const d = process.cpuUsage(c); return [(d.user + d.system) / 1000, performance.now() - s]; };
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1);
const q = (query: string, params: Record<string, unknown>) => () => ch.query({ query, query_params: params, format: 'JSONEachRow' }).then((r) => r.json());
const variants: Record<string, (ids: string[]) => () => Promise<unknown>> = {
  'SELECT 1': () => q('SELECT 1', {}),
  'spans key read LIMIT 1 BY': (ids) => q(`SELECT workspace_id, trace_id, span_id, version, is_deleted, trace_name, session_id, environment, source, parent_span_id, status, kind, start_time, end_time, duration_ms, model, provider, input_tokens, output_tokens, total_tokens, cost_usd FROM spans WHERE workspace_id = {ws:String} AND trace_id IN {ids:Array(String)} ORDER BY version DESC LIMIT 1 BY trace_id, span_id`, { ws, ids }),
  'spans key read FINAL': (ids) => q(`SELECT trace_id, span_id, version, parent_span_id, status, kind, start_time, end_time, duration_ms, model, provider, input_tokens, output_tokens, total_tokens, cost_usd FROM spans FINAL WHERE workspace_id = {ws:String} AND trace_id IN {ids:Array(String)}`, { ws, ids }),
  'traces key read': (ids) => q(`SELECT trace_id, name, session_id, environment, version FROM traces WHERE workspace_id = {ws:String} AND trace_id IN {ids:Array(String)} ORDER BY version DESC LIMIT 1 BY trace_id`, { ws, ids }),
  'recompute (current)': (ids) => () => recomputeTraceSummaries(ch, ws, ids),
  'recompute SELECT only': (ids) => async () => {
    let captured: { query: string; query_params: Record<string, unknown> } | undefined;
    await recomputeTraceSummaries({ command: async (x: any) => { captured = x; } } as any, ws, ids);
    const select = captured!.query.replace(/INSERT INTO traces \([^)]*\)/s, '');
    await ch.query({ query: select, query_params: captured!.query_params, format: 'JSONEachRow' }).then((r) => r.json());
  },
  'recompute no join': (ids) => async () => {
    let captured: { query: string; query_params: Record<string, unknown> } | undefined;
    await recomputeTraceSummaries({ command: async (x: any) => { captured = x; } } as any, ws, ids);
    const select = captured!.query.replace(/INSERT INTO traces \([^)]*\)/s, '').replace(/LEFT JOIN \(.*\) AS previous ON previous.trace_id = s.trace_id/s, 'LEFT JOIN (SELECT \'\' AS trace_id, \'\' AS name, \'\' AS session_id, \'\' AS environment, \'\' AS service, \'\' AS user_id, [] AS tags, toUInt64(0) AS version) AS previous ON previous.trace_id = s.trace_id');
    await ch.query({ query: select, query_params: captured!.query_params, format: 'JSONEachRow' }).then((r) => r.json());
  },
  'recompute SELECT, no such trace': (ids) => async () => {
    let captured: { query: string; query_params: Record<string, unknown> } | undefined;
    await recomputeTraceSummaries({ command: async (x: any) => { captured = x; } } as any, ws, ids);
    const select = captured!.query.replace(/INSERT INTO traces \([^)]*\)/s, '');
    await ch.query({ query: select, query_params: { ...captured!.query_params, traceIds: ['nope'] }, format: 'JSONEachRow' }).then((r) => r.json());
  },
  'insert summary rows': (ids) => async () => {
    const r = await ch.query({ query: `SELECT * EXCEPT (is_deleted) FROM traces FINAL WHERE workspace_id = {ws:String} AND trace_id IN {ids:Array(String)}`, query_params: { ws, ids }, format: 'JSONEachRow' });
    const rows = await r.json();
    const c = process.cpuUsage(); const s = performance.now();
    await ch.insert({ table: 'traces', values: rows as any[], format: 'JSONEachRow' });
    extra.push([(process.cpuUsage(c).user + process.cpuUsage(c).system) / 1000, performance.now() - s]);
  },
};
const extra: number[][] = [];
for (const n of [1, 16]) {
  const results: Record<string, { c: number[]; w: number[] }> = {};
  for (let i = 0; i < 30; i++) {
    const traces = Array.from({ length: n }, (_, j) => makeTrace(randomTraceId(), base + j));
    const ins = await cpu(() => insertSpanRows(ch, toSpanRows(ws, traces)));
    (results['insert'] ??= { c: [], w: [] }).c.push(ins[0]!); results['insert']!.w.push(ins[1]!);
    for (const [name, make] of Object.entries(variants)) {
      const [c, w] = await cpu(make(traces.map((t) => t.traceId)));
      (results[name] ??= { c: [], w: [] }).c.push(c!); results[name]!.w.push(w!);
    }
  }
  console.log(`${n}: plain insert of summary rows: cpu ${med(extra.map((x) => x[0]!))} wall ${med(extra.map((x) => x[1]!))}`); extra.length = 0;
  for (const [name, r] of Object.entries(results)) console.log(`${n} trace(s): ${name}: cpu ${med(r.c)} ms, wall ${med(r.w)} ms`);
}
await store.close();
process.exit(0);
