import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type Tenant } from '../support/app.js';
import { decodeProtobufResponse, encodeProtobufLogsRequest, encodeProtobufRequest } from '../../src/traces/ingest/otlp/wire/protobuf.js';

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');
const str = (v: string) => ({ stringValue: v });
const kvlist = (record: Record<string, unknown>): unknown => ({
  kvlistValue: {
    values: Object.entries(record).map(([key, value]) => ({
      key,
      value:
        typeof value === 'string'
          ? str(value)
          : Array.isArray(value)
            ? { arrayValue: { values: value.map(kvlist) } }
            : kvlist(value as Record<string, unknown>),
    })),
  },
});

function chatSpan(trace: number, span: number, attributes: { key: string; value: unknown }[] = []) {
  return {
    traceId: hex(trace, 16),
    spanId: hex(span, 8),
    name: 'chat gpt-4o-mini',
    kind: 3,
    startTimeUnixNano: '1735689600000000000',
    endTimeUnixNano: '1735689601000000000',
    attributes: [
      { key: 'gen_ai.operation.name', value: str('chat') },
      { key: 'gen_ai.system', value: str('openai') },
      { key: 'gen_ai.request.model', value: str('gpt-4o-mini') },
      ...attributes,
    ],
  };
}
const traces = (spans: unknown[]) => ({
  resourceSpans: [
    { resource: { attributes: [{ key: 'service.name', value: str('logs-svc') }] }, scopeSpans: [{ scope: { name: 'openai_v2' }, spans }] },
  ],
});

function record(trace: number, span: number, eventName: string, body: Record<string, unknown>, time: string) {
  return {
    timeUnixNano: time,
    eventName,
    traceId: hex(trace, 16),
    spanId: hex(span, 8),
    body: kvlist(body),
    attributes: [{ key: 'gen_ai.system', value: str('openai') }],
  };
}
const logs = (records: unknown[]) => ({
  resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 'openai_v2' }, logRecords: records }] }],
});

const conversation = (trace: number, span: number) => [
  record(trace, span, 'gen_ai.user.message', { content: 'Weather in Paris?' }, '1735689600100000000'),
  record(
    trace,
    span,
    'gen_ai.choice',
    {
      index: '0',
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
      },
    },
    '1735689600900000000',
  ),
];

async function post(url: string, payload: Buffer | string, headers: Record<string, string>) {
  return ctx.app.inject({ method: 'POST', url, headers: { ...tenant.headers, ...headers }, payload });
}
const protobuf = { 'content-type': 'application/x-protobuf' };
/** Protobuf ids are bytes: hex ids of a JSON-shaped request become buffers. */
const pb = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(pb)
    : typeof value === 'object' && value !== null
      ? Object.fromEntries(
          Object.entries(value).map(([k, v]) => [
            k,
            (k === 'traceId' || k === 'spanId') && typeof v === 'string' ? Buffer.from(v, 'hex') : pb(v),
          ]),
        )
      : value;
const json = { 'content-type': 'application/json' };

async function span(trace: number, span: number, owner = tenant) {
  const res = await ctx.app.inject({ method: 'GET', url: `/api/traces/${hex(trace, 16)}`, headers: owner.headers });
  return res.json().data.spans.find((s: { spanId: string }) => s.spanId === hex(span, 8));
}

const expectedInput = { messages: [{ role: 'user', content: 'Weather in Paris?' }] };
const expectedOutput = {
  messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }] }],
  raw: { logs: [{ message: 0, finish_reason: 'tool_calls' }] },
};

describe('POST /api/traces/otlp/v1/logs', () => {
  it('fills a stored span from records that arrive after it (protobuf)', async () => {
    expect((await post('/api/traces/otlp/v1/traces', encodeProtobufRequest(pb(traces([chatSpan(1, 1)]))), protobuf)).statusCode).toBe(200);
    const res = await post('/api/traces/otlp/v1/logs', encodeProtobufLogsRequest(pb(logs(conversation(1, 1)))), protobuf);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-protobuf');
    expect(decodeProtobufResponse(res.rawPayload).partialSuccess).toBeUndefined();
    const stored = await span(1, 1);
    expect(stored.input).toEqual(expectedInput);
    expect(stored.output).toEqual(expectedOutput);
    expect(stored.metadata.otel).toMatchObject({ contentFrom: 'logs', logRecords: 2 });
    expect(stored).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai', kind: 'llm.chat' });
  });

  it('keeps records that arrive first for the span that comes later (JSON, gzip)', async () => {
    const res = await post('/api/traces/otlp/v1/logs', gzipSync(JSON.stringify(logs(conversation(2, 1)))), {
      ...json,
      'content-encoding': 'gzip',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ accepted: 2, rejected: 0, spansUpdated: 0 });
    await post('/api/traces/otlp/v1/traces', JSON.stringify(traces([chatSpan(2, 1)])), json);
    const stored = await span(2, 1);
    expect(stored.input).toEqual(expectedInput);
    expect(stored.output).toEqual(expectedOutput);
  });

  it('gives the same span when records and span are sent twice (re-sent records are one)', async () => {
    await post('/api/traces/otlp/v1/logs', JSON.stringify(logs(conversation(3, 1))), json);
    await post('/api/traces/otlp/v1/traces', JSON.stringify(traces([chatSpan(3, 1)])), json);
    const again = await post('/api/traces/otlp/v1/logs', JSON.stringify(logs(conversation(3, 1))), json);
    expect(again.json().data.spansUpdated).toBe(1);
    await post('/api/traces/otlp/v1/traces', JSON.stringify(traces([chatSpan(3, 1)])), json);
    const stored = await span(3, 1);
    expect(stored.input).toEqual(expectedInput);
    expect(stored.output).toEqual(expectedOutput);
    const trace = (await ctx.app.inject({ method: 'GET', url: `/api/traces/${hex(3, 16)}`, headers: tenant.headers })).json().data;
    expect(trace.spanCount).toBe(1);
  });

  it('leaves the messages a span sent itself', async () => {
    const own = chatSpan(4, 1, [
      { key: 'gen_ai.input.messages', value: str('[{"role":"user","parts":[{"type":"text","content":"Mine"}]}]') },
    ]);
    await post('/api/traces/otlp/v1/traces', JSON.stringify(traces([own])), json);
    expect((await post('/api/traces/otlp/v1/logs', JSON.stringify(logs(conversation(4, 1))), json)).json().data.spansUpdated).toBe(0);
    expect((await span(4, 1)).input).toEqual({ messages: [{ role: 'user', content: 'Mine' }] });
  });

  it('counts and explains records it does not keep', async () => {
    const res = await post(
      '/api/traces/otlp/v1/logs',
      JSON.stringify(
        logs([
          { timeUnixNano: '1735689600100000000', eventName: 'app.log', traceId: hex(5, 16), spanId: hex(1, 8), body: str('hello') },
          { eventName: 'gen_ai.user.message', body: str('no span') },
        ]),
      ),
      json,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().partialSuccess.rejectedLogRecords).toBe(2);
    expect(res.json().partialSuccess.errorMessage).toMatch(/2 of 2 log records rejected: .*not a GenAI content event.*names no span/);
  });

  it('answers 400 for a body that is not a logs request, 401 without a key', async () => {
    expect((await post('/api/traces/otlp/v1/logs', JSON.stringify({ resourceSpans: [] }), json)).statusCode).toBe(400);
    expect((await post('/api/traces/otlp/v1/logs', Buffer.from([0xff, 0xff, 0xff]), protobuf)).statusCode).toBe(400);
    const anonymous = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/otlp/v1/logs',
      headers: json,
      payload: '{"resourceLogs":[]}',
    });
    expect(anonymous.statusCode).toBe(401);
  });

  it('deletes the records with their trace: none left readable, and the span sent again takes none back', async () => {
    const other = await ctx.tenant();
    for (const owner of [tenant, other]) {
      const send = (url: string, payload: string) =>
        ctx.app.inject({ method: 'POST', url, headers: { ...owner.headers, ...json }, payload });
      await send('/api/traces/otlp/v1/logs', JSON.stringify(logs(conversation(7, 1))));
      await send('/api/traces/otlp/v1/traces', JSON.stringify(traces([chatSpan(7, 1)])));
      expect((await span(7, 1, owner)).input).toEqual(expectedInput);
    }
    const live = async (workspaceId: string) => {
      const rows = await ctx.clickhouse.query({
        query: `SELECT body FROM genai_log_records FINAL WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0`,
        query_params: { workspaceId, traceId: hex(7, 16) },
        format: 'JSONEachRow',
      });
      return (await rows.json<{ body: string }>()).length;
    };
    expect(await live(tenant.workspaceId)).toBe(2);

    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${hex(7, 16)}`, headers: tenant.headers });
    expect(deleted.statusCode).toBe(200);
    expect(await live(tenant.workspaceId)).toBe(0);
    // Nothing of the records is left on the newest rows; the other workspace's trace is untouched.
    const newest = await ctx.clickhouse.query({
      query: `SELECT body, event_name FROM genai_log_records FINAL WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String}`,
      query_params: { workspaceId: tenant.workspaceId, traceId: hex(7, 16) },
      format: 'JSONEachRow',
    });
    expect((await newest.json<{ body: string }>()).map((r) => r.body)).toEqual(['', '']);
    expect(await live(other.workspaceId)).toBe(2);
    expect((await span(7, 1, other)).input).toEqual(expectedInput);

    await post('/api/traces/otlp/v1/traces', JSON.stringify(traces([chatSpan(7, 1)])), json);
    const again = await span(7, 1);
    expect(again.input).toBeUndefined();
    expect(again.metadata.otel.contentFrom).toBeUndefined();
    // Records sent again after the deletion are kept and fill the span, as for any new records.
    expect((await post('/api/traces/otlp/v1/logs', JSON.stringify(logs(conversation(7, 1))), json)).json().data.spansUpdated).toBe(1);
    expect((await span(7, 1)).input).toEqual(expectedInput);
  });

  it('maps GenAI content sent as span events', async () => {
    const withEvents = {
      ...chatSpan(6, 1),
      events: [
        { timeUnixNano: '1735689600100000000', name: 'gen_ai.user.message', attributes: [{ key: 'content', value: str('Hi') }] },
        {
          timeUnixNano: '1735689600200000000',
          name: 'gen_ai.choice',
          attributes: [{ key: 'message', value: kvlist({ role: 'assistant', content: 'Hello' }) }],
        },
      ],
    };
    await post('/api/traces/otlp/v1/traces', JSON.stringify(traces([withEvents])), json);
    const stored = await span(6, 1);
    expect(stored.input.messages).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(stored.output.messages).toEqual([{ role: 'assistant', content: 'Hello' }]);
    expect(stored.events).toBeUndefined();
  });
});

describe('Langfuse path /api/public/otel/v1/traces', () => {
  const basic = (secret: string, publicKey = 'pk-lf-1') => ({
    authorization: `Basic ${Buffer.from(`${publicKey}:${secret}`).toString('base64')}`,
  });
  const body = () => encodeProtobufRequest(pb(traces([chatSpan(20, 1)])));
  const send = (headers: Record<string, string>, url = '/api/public/otel/v1/traces') =>
    ctx.app.inject({ method: 'POST', url, headers: { ...protobuf, ...headers }, payload: body() });

  it('takes Basic credentials whose secret part is a Loupe API key', async () => {
    const res = await send(basic(tenant.key));
    expect(res.statusCode).toBe(200);
    expect((await span(20, 1)).kind).toBe('llm.chat');
  });
  it('refuses a wrong secret, a missing secret and Basic credentials elsewhere', async () => {
    expect((await send(basic('lk_wrong'))).statusCode).toBe(401);
    expect((await send({ authorization: `Basic ${Buffer.from('only-public').toString('base64')}` })).statusCode).toBe(401);
    expect((await send(basic(tenant.key), '/api/traces/otlp/v1/traces')).statusCode).toBe(401);
  });
  it('still takes x-api-key there', async () => {
    expect((await send({ 'x-api-key': tenant.key })).statusCode).toBe(200);
  });
});
