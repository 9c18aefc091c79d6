import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from '../../src/stores/clickhouse.js';
import { storeTraces, traceIngestOf, storedSpanOf, toSpanRows } from '../../src/traces/ingest/ingest.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import { getTrace } from '../../src/traces/query/read.js';
import { listTraces } from '../../src/traces/query/list.js';
import { listTracesQuery, type Span, type Trace } from '../../src/traces/model/schemas.js';
import { embeddedClickhouseDir } from '../support/stores.js';

/**
 * Migration 0003 on a store holding rows of the earlier schema: every span and summary
 * must read back exactly as before, now from `spans.detail` and `traces.item`.
 */

const workspaceId = 'ws-migration';
const database = `loupe_m_${randomBytes(5).toString('hex')}`;
let store: ClickhouseStore;

const spans: Span[] = [
  {
    spanId: 'root',
    name: 'agent "run" \\ é😀',
    kind: 'agent',
    startTime: '2026-03-01T10:00:00.000Z',
    endTime: '2026-03-01T10:00:02.5Z',
    durationMs: 2500,
    status: 'ok',
    metadata: { user: 'u-1', nested: { list: [1, 'two', null, true] } },
  },
  {
    spanId: 'llm-1',
    parentSpanId: 'root',
    name: 'chat',
    kind: 'llm.chat',
    startTime: '2026-03-01T10:00:00.000123Z',
    endTime: '2026-03-01T12:00:01.000456+02:00',
    durationMs: 1000.333,
    status: 'error',
    statusMessage: 'line one\nline "two"\t\u0001',
    model: 'gpt-4o',
    provider: 'openai',
    inputTokens: 0,
    outputTokens: 12,
    totalTokens: 12,
    costUsd: 0.0000123,
    input: { messages: [{ role: 'user', content: 'héllo </script> \u2028' }], raw: { n: 1e-7, big: 12345678901234567000 } },
    output: { toolCalls: [{ id: 'c1', name: 'search', arguments: { q: 'x' }, result: [1, 2] }], text: '' },
    attributes: { 'gen_ai.request.temperature': 0.1, empty: {} },
    events: [{ name: 'token', timestamp: '2026-03-01T10:00:00.5Z', attributes: { i: 1 } }],
  },
  {
    spanId: 'tool-1',
    parentSpanId: 'root',
    name: 'search',
    kind: 'tool',
    startTime: '2026-03-01T10:00:01Z',
    endTime: '2026-03-01T10:00:01Z',
    durationMs: 0,
    status: 'unset',
    attributes: {},
  },
];
const complete: Trace = { traceId: 't-complete', name: 'checkout', sessionId: 's-1', source: 'sdk', environment: 'production', spans };
const running: Trace = { traceId: 't-running', source: 'otel', spans: [{ ...spans[2]!, spanId: 'orphan', parentSpanId: 'missing' }] };
const deleted: Trace = { traceId: 't-deleted', source: 'sdk', spans: [spans[0]!] };

/** A span row as migration 0002 stored it: the payload in five JSON text columns, no detail. */
function oldSpanRows(trace: Trace, version: string) {
  return toSpanRows(workspaceId, [trace]).map(({ detail: _detail, ...row }, i) => {
    const span = trace.spans[i]!;
    const json = (value: unknown) => (value === undefined ? '' : JSON.stringify(value));
    return {
      ...row,
      version,
      input: json(span.input),
      output: json(span.output),
      attributes: json(span.attributes),
      events: json(span.events),
      metadata: json(span.metadata),
    };
  });
}

const summaryBase = {
  workspace_id: workspaceId,
  model: '',
  provider: '',
  input_tokens: null,
  output_tokens: null,
  total_tokens: null,
  cost_usd: null,
  error_count: 0,
  is_deleted: 0,
};

beforeAll(async () => {
  store = await openClickhouse({ database, dataDir: embeddedClickhouseDir });
  const ddl = { database, cluster: undefined, retentionDays: undefined };
  expect(await migrateClickhouse(store.client, ddl, 2)).toEqual(['0001_spans_and_traces.sql', '0002_latest_views_and_session_indexes.sql']);
  await store.client.insert({
    table: 'spans',
    values: [
      ...oldSpanRows(complete, '10'),
      ...oldSpanRows(running, '10'),
      ...oldSpanRows(deleted, '10'),
      // The tombstone DELETE wrote: keys and start time only.
      {
        workspace_id: workspaceId,
        trace_id: 't-deleted',
        span_id: 'root',
        start_time: '2026-03-01 10:00:00.000000',
        version: '11',
        is_deleted: 1,
      },
    ],
    format: 'JSONEachRow',
  });
  await store.client.insert({
    table: 'traces',
    values: [
      {
        ...summaryBase,
        trace_id: 't-complete',
        name: 'checkout',
        session_id: 's-1',
        source: 'sdk',
        environment: 'production',
        status: 'completed',
        trace_kind: 'agent',
        start_time: '2026-03-01 10:00:00.000000',
        end_time: '2026-03-01 10:00:02.500000',
        duration_ms: 2500,
        model: 'gpt-4o',
        provider: 'openai',
        input_tokens: 0,
        output_tokens: 12,
        total_tokens: 12,
        cost_usd: 0.0000123,
        span_count: 3,
        error_count: 1,
        version: '10',
      },
      {
        ...summaryBase,
        trace_id: 't-running',
        name: '',
        session_id: '',
        source: 'otel',
        environment: '',
        status: 'running',
        trace_kind: '',
        start_time: '2026-03-01 10:00:01.000000',
        end_time: null,
        duration_ms: null,
        span_count: 1,
        version: '10',
      },
      {
        ...summaryBase,
        trace_id: 't-deleted',
        name: '',
        session_id: '',
        source: 'sdk',
        environment: '',
        status: 'completed',
        trace_kind: 'agent',
        start_time: '2026-03-01 10:00:00.000000',
        end_time: '2026-03-01 10:00:02.500000',
        duration_ms: 2500,
        span_count: 1,
        version: '10',
      },
      {
        workspace_id: workspaceId,
        trace_id: 't-deleted',
        start_time: '2026-03-01 10:00:00.000000',
        span_count: 0,
        error_count: 0,
        version: '11',
        is_deleted: 1,
      },
    ],
    format: 'JSONEachRow',
  });
  // Later migrations (0004 on) run too: the rows must read back as before after all of them.
  expect(await migrateClickhouse(store.client, ddl)).toContain('0003_span_detail_and_trace_item.sql');
});

afterAll(async () => {
  await store.client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await store.close();
});

const list = (query: Record<string, string> = {}) => listTraces(store.client, workspaceId, listTracesQuery.parse(query));

describe('migration 0003 on rows of the earlier schema', () => {
  it('answers every span exactly as the ingest now stores it', async () => {
    const detail = await getTrace(store.client, workspaceId, 't-complete');
    expect(detail.spans).toEqual(spans.map((s) => storedSpanOf(s)));
    // Key order too: the JSON the engine wrote is the JSON the ingest writes.
    expect(detail.spans.map((s) => JSON.stringify(s))).toEqual(detail.spans.map((s) => JSON.stringify(storedSpanOf(s))));
    expect(detail.spans[1]).toMatchObject({ startTime: '2026-03-01T10:00:00.000123Z', endTime: '2026-03-01T10:00:01.000456Z' });
  });

  it('answers the summaries as list items, nulls and usage as before, and keeps deleted traces hidden', async () => {
    const { items, pagination } = await list();
    expect(pagination.total).toBe(2);
    expect(items).toEqual([
      {
        traceId: 't-running',
        name: null,
        sessionId: null,
        source: 'otel',
        environment: null,
        service: null,
        userId: null,
        tags: [],
        status: 'running',
        traceKind: null,
        startTime: '2026-03-01T10:00:01.000Z',
        endTime: null,
        durationMs: null,
        spanCount: 1,
        errorCount: 0,
      },
      {
        traceId: 't-complete',
        name: 'checkout',
        sessionId: 's-1',
        source: 'sdk',
        environment: 'production',
        service: null,
        userId: null,
        tags: [],
        status: 'completed',
        traceKind: 'agent',
        startTime: '2026-03-01T10:00:00.000Z',
        endTime: '2026-03-01T10:00:02.500Z',
        durationMs: 2500,
        model: 'gpt-4o',
        provider: 'openai',
        inputTokens: 0,
        outputTokens: 12,
        totalTokens: 12,
        costUsd: 0.0000123,
        spanCount: 3,
        errorCount: 1,
      },
    ]);
    await expect(getTrace(store.client, workspaceId, 't-deleted')).rejects.toMatchObject({ status: 404 });
    const { items: withSpans } = await list({ include: 'spans', sessionId: 's-1' });
    expect(withSpans[0]!.spans).toHaveLength(3);
  });

  it('keeps the payload columns for SQL readers, as the same JSON text', async () => {
    const result = await store.client.query({
      query: `SELECT span_id, input, output, attributes, events, metadata FROM spans_latest
              WHERE workspace_id = {w:String} AND trace_id = 't-complete' ORDER BY span_id`,
      query_params: { w: workspaceId },
      format: 'JSONEachRow',
    });
    const rows = await result.json<Record<string, string>>();
    const bySpan = new Map(spans.map((s) => [s.spanId, s]));
    for (const row of rows) {
      const span = bySpan.get(row.span_id!)!;
      for (const column of ['input', 'output', 'attributes', 'events', 'metadata'] as const) {
        expect(row[column] === '' ? undefined : JSON.parse(row[column]!)).toEqual(span[column]);
      }
    }
    expect(rows).toHaveLength(3);
  });

  it('takes new traces and re-sends after the migration, summaries and details alike', async () => {
    await storeTraces(traceIngestOf(new WriteBatcher(store.client)), workspaceId, [
      { ...running, name: 'now named', spans: [...running.spans, { ...spans[0]!, spanId: 'late-root' }] },
    ]);
    const detail = await getTrace(store.client, workspaceId, 't-running');
    expect(detail).toMatchObject({ name: 'now named', status: 'completed', spanCount: 2, traceKind: 'agent', durationMs: 2500 });
    expect(detail.spans.map((s) => s.spanId)).toEqual(['late-root', 'orphan']);
  });
});
