import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@clickhouse/client';
import { buildApp } from '../../src/app.js';
import { createTestContext, type TestContext, type Tenant } from '../support/app.js';
import { decodeProtobufResponse, encodeProtobufRequest } from '../../src/traces/ingest/otlp/wire/protobuf.js';

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

function jsonSpan(trace: number, span: number, extra: Record<string, unknown> = {}) {
  return {
    traceId: hex(trace, 16),
    spanId: hex(span, 8),
    name: `span-${span}`,
    kind: 1,
    startTimeUnixNano: '1735689600123456789',
    endTimeUnixNano: '1735689601123457789',
    status: { code: 1 },
    ...extra,
  };
}

const request = (spans: unknown[], resource: unknown[] = [{ key: 'service.name', value: str('svc') }]) => ({
  resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope: { name: 'test-scope', version: '1.2.3' }, spans }] }],
});

async function post(body: unknown, headers: Record<string, string> = {}, url = '/api/traces/otlp') {
  return ctx.app.inject({
    method: 'POST',
    url,
    headers: { ...tenant.headers, 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
}

async function getTrace(traceId: string, headers = tenant.headers) {
  return ctx.app.inject({ method: 'GET', url: `/api/traces/${traceId}`, headers });
}

describe('POST /api/traces/otlp (JSON)', () => {
  it('stores spans with microsecond times, status, events, resource and scope', async () => {
    const body = request(
      [
        jsonSpan(1, 1, {
          attributes: [
            { key: 'gen_ai.operation.name', value: str('chat') },
            { key: 'gen_ai.request.model', value: str('gpt-4o') },
            { key: 'gen_ai.provider.name', value: str('openai') },
            { key: 'gen_ai.usage.input_tokens', value: { intValue: 12 } },
            { key: 'gen_ai.usage.output_tokens', value: { intValue: '30' } },
            { key: 'custom.flag', value: { boolValue: true } },
          ],
          // A nanosecond time as a JSON number, as some exporters send it: past 2^53 it is not exact.
          // eslint-disable-next-line no-loss-of-precision
          events: [{ timeUnixNano: 1735689600500000001, name: 'first-token', attributes: [{ key: 'n', value: { doubleValue: 1.5 } }] }],
          status: { code: 2, message: 'boom' },
        }),
      ],
      [
        { key: 'service.name', value: str('svc') },
        { key: 'deployment.environment.name', value: str('staging') },
      ],
    );
    // The event time is a bare JSON number beyond 2^53: it must keep every digit.
    const text = JSON.stringify(body).replace('"timeUnixNano":1735689600500000000', '"timeUnixNano":1735689600500001001');
    const res = await post(text);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ data: { accepted: 1, rejected: 0 }, meta: { requestId: expect.any(String) } });
    expect(res.json().partialSuccess).toBeUndefined();

    const trace = (await getTrace(hex(1, 16))).json().data;
    expect(trace).toMatchObject({ source: 'otel', environment: 'staging', name: 'span-1', status: 'error' });
    const [span] = trace.spans;
    expect(span).toMatchObject({
      kind: 'llm.chat',
      model: 'gpt-4o',
      provider: 'openai',
      inputTokens: 12,
      outputTokens: 30,
      totalTokens: 42,
      status: 'error',
      statusMessage: 'boom',
      startTime: '2025-01-01T00:00:00.123456Z',
      endTime: '2025-01-01T00:00:01.123457Z',
      attributes: { 'custom.flag': true, 'gen_ai.operation.name': 'chat' },
      metadata: {
        resource: { 'service.name': 'svc', 'deployment.environment.name': 'staging' },
        scope: { name: 'test-scope', version: '1.2.3' },
      },
    });
    expect(span.durationMs).toBeCloseTo(1000.001, 6);
    expect(span.events).toEqual([{ name: 'first-token', timestamp: '2025-01-01T00:00:00.500001Z', attributes: { n: 1.5 } }]);
    expect(span.attributes['gen_ai.request.model']).toBeUndefined();
  });

  it('answers on /v1/traces too and upserts a re-sent span', async () => {
    const body = request([jsonSpan(2, 1)]);
    expect((await post(body, {}, '/api/traces/otlp/v1/traces')).statusCode).toBe(200);
    expect((await post(body, {}, '/api/traces/otlp/v1/traces')).statusCode).toBe(200);
    const trace = (await getTrace(hex(2, 16))).json().data;
    expect(trace.spanCount).toBe(1);
  });

  it('takes a gzip body', async () => {
    const res = await post(gzipSync(JSON.stringify(request([jsonSpan(3, 1)]))), { 'content-encoding': 'gzip' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.accepted).toBe(1);
  });

  it('stores the valid spans of a mixed request and reports the rest (partial success)', async () => {
    const res = await post(
      request([
        jsonSpan(4, 1),
        jsonSpan(4, 2, { parentSpanId: hex(1, 8) }),
        jsonSpan(4, 3, { spanId: 'xyz' }),
        jsonSpan(0, 4),
        jsonSpan(4, 5, { startTimeUnixNano: undefined }),
        jsonSpan(4, 6, { name: 'x'.repeat(5000), parentSpanId: hex(1, 8) }),
      ]),
    );
    expect(res.statusCode).toBe(200);
    const json = res.json();
    // A name past the limit is cut, never a reason to lose the span.
    expect(json.data).toMatchObject({ accepted: 3, rejected: 3 });
    expect(json.partialSuccess.rejectedSpans).toBe(3);
    expect(json.partialSuccess.errorMessage).toMatch(/3 of 6 spans rejected/);
    expect(json.partialSuccess.errorMessage).toMatch(/spanId/);
    expect(json.data.errors.map((e: { reason: string }) => e.reason).join('\n')).toMatch(/startTimeUnixNano/);
    const trace = (await getTrace(hex(4, 16))).json().data;
    expect(trace.spanCount).toBe(3);
    expect(trace.spans.find((s: { spanId: string }) => s.spanId === hex(6, 8)).name).toHaveLength(1000);
  });

  it('leaves out a trace field the native schema cannot hold instead of losing the trace', async () => {
    const res = await post(request([jsonSpan(8, 1)], [{ key: 'deployment.environment.name', value: str('prod env with spaces') }]));
    expect(res.json().data).toMatchObject({ accepted: 1, rejected: 0 });
    const trace = (await getTrace(hex(8, 16))).json().data;
    expect(trace.environment).toBeNull();
    expect(trace.spans[0].metadata.resource['deployment.environment.name']).toBe('prod env with spaces');
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    // Paths as served, without a trailing slash; bodies in both encodings.
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/traces/otlp', '/api/traces/otlp/v1/traces']));
    expect(Object.keys(doc.paths['/api/traces/otlp'].post.requestBody.content)).toEqual(
      expect.arrayContaining(['application/json', 'application/x-protobuf']),
    );
  });

  it('answers 400 for a body that is not OTLP and for broken JSON', async () => {
    const native = await post({ traces: [{ traceId: 't', source: 'sdk', spans: [] }] });
    expect(native.statusCode).toBe(400);
    expect(native.json().error).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(native.json().error.details.issues[0].path).toBe('body');
    expect((await post('{"resourceSpans": [')).statusCode).toBe(400);
    const wrongType = await post({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 5 }] }] }] });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error.details.issues[0].path).toBe('body.resourceSpans.0.scopeSpans.0.spans.0.name');
  });

  it('answers 415 for another content type', async () => {
    const res = await post('hello', { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(415);
    expect(res.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 413 for a small gzip bomb', async () => {
    const bomb = gzipSync(Buffer.alloc(ctx.config.LOUPE_BODY_LIMIT + 1024, 0x20));
    expect(bomb.length).toBeLessThan(100_000);
    const res = await post(bomb, { 'content-encoding': 'gzip' });
    expect(res.statusCode).toBe(413);
  });

  it('needs a key, and a workspace cannot write into another', async () => {
    const anonymous = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/otlp',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(anonymous.statusCode).toBe(401);
    const other = await ctx.tenant();
    expect((await post(request([jsonSpan(5, 1)]), other.headers)).statusCode).toBe(200);
    expect((await getTrace(hex(5, 16))).statusCode).toBe(404);
    expect((await getTrace(hex(5, 16), other.headers)).statusCode).toBe(200);
  });
});

describe('POST /api/traces/otlp (protobuf)', () => {
  it('decodes protobuf, answers a protobuf ExportTraceServiceResponse with partial success', async () => {
    const span = (id: number, extra: Record<string, unknown> = {}) => ({
      traceId: Buffer.from(hex(6, 16), 'hex'),
      spanId: Buffer.from(hex(id, 8), 'hex'),
      name: `p-${id}`,
      startTimeUnixNano: '1735689600000001999',
      endTimeUnixNano: '1735689600000002000',
      ...extra,
    });
    const body = encodeProtobufRequest(request([span(1), span(2, { endTimeUnixNano: '0' })]));
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/otlp/v1/traces',
      headers: { ...tenant.headers, 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
      payload: gzipSync(body),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-protobuf');
    const decoded = decodeProtobufResponse(res.rawPayload);
    expect(decoded.partialSuccess).toMatchObject({ rejectedSpans: 1, errorMessage: expect.stringMatching(/endTimeUnixNano/) });
    const trace = (await getTrace(hex(6, 16))).json().data;
    expect(trace.spans[0]).toMatchObject({ startTime: '2025-01-01T00:00:00.000001Z', endTime: '2025-01-01T00:00:00.000002Z' });
  });

  it('answers 400 for bytes that are not protobuf', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/otlp',
      headers: { ...tenant.headers, 'content-type': 'application/x-protobuf' },
      payload: Buffer.from('{"not":"protobuf"}'),
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('store failure', () => {
  it('answers 503 with Retry-After so exporters retry', async () => {
    const dead = createClient({ url: 'http://127.0.0.1:9', request_timeout: 2000 });
    const app = await buildApp({ config: ctx.config, sql: ctx.sql, clickhouse: dead });
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/api/traces/otlp',
        headers: { ...tenant.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(request([jsonSpan(7, 1)])),
      });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
    } finally {
      await app.close();
      await dead.close();
    }
  });
});
