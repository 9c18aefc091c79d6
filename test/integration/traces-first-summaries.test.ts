import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestLog } from '../../src/traces/writer/ingest-log.js';
import { recomputeTraceSummaries } from '../../src/traces/summaries/recompute.js';
import { toSpanRows } from '../../src/traces/ingest/ingest.js';
import { insertSpanRows } from '../../src/traces/tables/spans-table.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

// A flush summarizes the traces the store holds no summary of from the rows it wrote, without
// reading their spans back (recompute.ts, decision 087): the summaries must be the ones the read
// gives, and writes that may have been stored before (replayed from the log) are still read.

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

const start = Date.parse('2026-07-01T10:00:00Z');
const at = (ms: number) => new Date(start + ms).toISOString();

/** A trace with a root and `children` LLM calls; `extra` fields on every span. */
function trace(
  traceId: string,
  spanIds: string[],
  withRoot: boolean,
  extra: Record<string, unknown> = {},
  trace: Record<string, unknown> = {},
) {
  return {
    traceId,
    source: 'sdk',
    ...trace,
    spans: [
      ...(withRoot
        ? [{ spanId: 'root', name: 'agent', kind: 'agent', startTime: at(0), endTime: at(900), durationMs: 900, status: 'ok' }]
        : []),
      ...spanIds.map((spanId, i) => ({
        spanId,
        parentSpanId: 'root',
        name: `call ${spanId}`,
        kind: 'llm.chat',
        startTime: at(10 + i),
        endTime: at(110 + i),
        durationMs: 100,
        status: 'ok',
        model: 'gpt-4o-mini',
        provider: 'openai',
        inputTokens: 100 + i,
        outputTokens: 7 * (i + 1),
        totalTokens: 100 + i + 7 * (i + 1),
        ...extra,
      })),
    ],
  };
}

/** The latest summary row of each trace, every column but the version. */
async function summaries(traceIds: string[]) {
  const result = await ctx.clickhouse.query({
    query: `SELECT * EXCEPT (version) FROM traces WHERE workspace_id = {w:String} AND trace_id IN {ids:Array(String)}
            ORDER BY version DESC LIMIT 1 BY trace_id`,
    query_params: { w: tenant.workspaceId, ids: traceIds },
    format: 'JSONEachRow',
  });
  const rows = await result.json<Record<string, unknown>>();
  return rows.sort((a, b) => String(a.trace_id).localeCompare(String(b.trace_id)));
}

const post = (traces: unknown[]) =>
  ctx.app.inject({ method: 'POST', url: '/api/traces', headers: tenant.headers, payload: { traces } }).then((res) => {
    expect(res.statusCode).toBe(200);
    return res;
  });

describe('first summaries from the written rows', () => {
  it('stores the summaries reading the spans back gives, for traces sent once, split, re-sent and in several flushes', async () => {
    const ids = ['fs-once', 'fs-split', 'fs-resent', 'fs-error', 'fs-session', 'fs-later', 'fs-priced'];
    // Concurrent requests, so several share a flush: a trace sent once; one split over two
    // requests; one whose span is sent again with other figures; an error; trace-level fields.
    await Promise.all([
      post([trace('fs-once', ['a', 'b', 'c'], true)]),
      post([trace('fs-split', ['a', 'b'], false)]),
      post([trace('fs-split', ['c'], true)]),
      post([trace('fs-resent', ['a', 'b'], true)]),
      post([trace('fs-resent', ['b'], false, { outputTokens: 99, status: 'error' })]),
      post([trace('fs-error', ['a'], true, { status: 'error', ttftMs: 42 })]),
      post([
        trace(
          'fs-session',
          ['a', 'b'],
          true,
          {},
          { sessionId: 'fs-s', userId: 'fs-u', tags: ['x', 'y'], environment: 'prod', name: 'chat' },
        ),
      ]),
      post([trace('fs-priced', ['a'], true, { costUsd: 0.125 })]),
    ]);
    await ctx.writer.settled();
    // A trace whose second part comes in a later flush: its summary is then read back.
    await post([trace('fs-later', ['a'], false)]);
    await ctx.writer.settled();
    await post([trace('fs-later', ['b'], true)]);
    await ctx.writer.settled();

    const flushed = await summaries(ids);
    expect(flushed.map((row) => row.trace_id)).toEqual([...ids].sort());
    expect(flushed.find((row) => row.trace_id === 'fs-split')).toMatchObject({ span_count: 4 });
    expect(flushed.find((row) => row.trace_id === 'fs-resent')).toMatchObject({ span_count: 3 });

    // The same traces summarized again from the spans the store holds (the read every flush made before).
    await recomputeTraceSummaries(ctx.writeClient, tenant.workspaceId, ids);
    expect(await summaries(ids)).toEqual(flushed);
  });

  it('reads back the spans of a write replayed from the log: a flush may have stored them before the process stopped', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'loupe-first-summaries-'));
    try {
      // The last process logged the write, and a flush of it stored the trace's spans but stopped
      // before its summary; the store holds spans the replayed write does not carry (`d`, `e`).
      const first = IngestLog.open(dir).log;
      const logged = toSpanRows(tenant.workspaceId, [trace('fs-replayed', ['a', 'b'], true) as never]);
      await first.append({ workspaceId: tenant.workspaceId, traceIds: ['fs-replayed'], rows: logged }).durable;
      await first.close(false);
      await insertSpanRows(ctx.writeClient, toSpanRows(tenant.workspaceId, [trace('fs-replayed', ['a', 'b', 'd', 'e'], true) as never]));

      const { log, recovered } = IngestLog.open(dir);
      expect(recovered.writes).toHaveLength(1);
      const writer = new WriteBatcher(ctx.writeClient, { log });
      writer.replay(recovered.writes);
      await writer.settled();
      await writer.close();
      const [summary] = await summaries(['fs-replayed']);
      // Taken from the replayed write alone, it would count 3 spans.
      expect(summary).toMatchObject({ span_count: 5, input_tokens: 100 + 101 + 102 + 103 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
