import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { buildApp } from '../../src/app.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { openTestStores, type TestStores } from '../support/stores.js';

let stores: TestStores;
let app: FastifyInstance;
let base: string;
const keys: { a: string; b: string } = { a: '', b: '' };

async function newKey(sql: TestStores['sql'], name: string) {
  const org = await tenancy.createOrganization(sql, { name, plan: 'pro' });
  const workspace = await tenancy.createWorkspace(sql, org.id, 'main');
  return (await tenancy.createApiKey(sql, { scope: 'workspace', organizationId: org.id, workspaceId: workspace.id })).key;
}

beforeAll(async () => {
  stores = await openTestStores();
  app = await buildApp({ config: stores.config, sql: stores.sql, clickhouse: stores.clickhouse });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  keys.a = await newKey(stores.sql, 'otlp-e2e-a');
  keys.b = await newKey(stores.sql, 'otlp-e2e-b');
});
afterAll(async () => {
  await app?.close();
  await stores?.close();
});

/** Records one small agent run with the real SDK: an agent span, an LLM call and a failing tool. */
function recordAgentRun(environment: string): { spans: ReadableSpan[]; traceId: string } {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'e2e-agent', 'deployment.environment.name': environment }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer: Tracer = provider.getTracer('e2e-instrumentation', '0.1.0');
  const root = tracer.startSpan('invoke_agent helper', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'helper', 'gen_ai.conversation.id': 'conv-1' },
  });
  const inRoot = trace.setSpan(context.active(), root);
  const llm = tracer.startSpan(
    'chat gpt-4o',
    {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
        'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'You are helpful.' }]),
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Oslo?' }] }]),
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }],
            finish_reason: 'tool_call',
          },
        ]),
      },
    },
    inRoot,
  );
  llm.addEvent('gen_ai.first_token', { 'gen_ai.latency_ms': 85 });
  llm.setStatus({ code: SpanStatusCode.OK });
  llm.end();
  const tool = tracer.startSpan(
    'execute_tool get_weather',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.tool.call.arguments': '{"city":"Oslo"}',
      },
    },
    inRoot,
  );
  tool.recordException(new Error('weather service timed out'));
  tool.setStatus({ code: SpanStatusCode.ERROR });
  tool.end();
  root.end();
  return { spans: memory.getFinishedSpans(), traceId: root.spanContext().traceId };
}

function exportWith(exporter: SpanExporter, spans: ReadableSpan[]) {
  return new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans, resolve));
}

async function fetchTrace(traceId: string, key: string) {
  const res = await fetch(`${base}/api/traces/${traceId}`, { headers: { 'x-api-key': key } });
  return { status: res.status, body: (await res.json()) as { data: any } };
}

/** Microseconds since the epoch of an ISO 8601 time with up to six fraction digits. */
function isoToMicros(iso: string): bigint {
  const fraction = (/\.(\d+)Z$/.exec(iso)?.[1] ?? '').padEnd(6, '0');
  return BigInt(Math.floor(Date.parse(iso) / 1000)) * 1_000_000n + BigInt(fraction);
}

async function expectAgentRun(run: { spans: ReadableSpan[]; traceId: string }, environment: string) {
  const traceId = run.traceId;
  const { status, body } = await fetchTrace(traceId, keys.a);
  expect(status).toBe(200);
  const detail = body.data;
  expect(detail).toMatchObject({
    source: 'otel',
    environment,
    sessionId: 'conv-1',
    name: 'invoke_agent helper',
    traceKind: 'agent',
    spanCount: 3,
  });
  const byName = Object.fromEntries(detail.spans.map((s: { name: string }) => [s.name, s]));
  const root = byName['invoke_agent helper'];
  const llm = byName['chat gpt-4o'];
  const tool = byName['execute_tool get_weather'];
  expect(root.parentSpanId).toBeUndefined();
  expect(llm).toMatchObject({
    parentSpanId: root.spanId,
    kind: 'llm.chat',
    model: 'gpt-4o-2024-08-06',
    provider: 'openai',
    inputTokens: 120,
    outputTokens: 30,
    totalTokens: 150,
    status: 'ok',
    input: {
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Weather in Oslo?' },
      ],
    },
    output: {
      messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }] }],
    },
    attributes: { 'gen_ai.request.model': 'gpt-4o', 'gen_ai.operation.name': 'chat' },
    events: [{ name: 'gen_ai.first_token', attributes: { 'gen_ai.latency_ms': 85 } }],
    metadata: { resource: { 'service.name': 'e2e-agent' }, scope: { name: 'e2e-instrumentation', version: '0.1.0' } },
  });
  expect(tool).toMatchObject({
    parentSpanId: root.spanId,
    kind: 'tool',
    status: 'error',
    statusMessage: 'weather service timed out',
    input: { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }] },
    events: [{ name: 'exception' }],
  });
  expect(detail.model).toBe('gpt-4o-2024-08-06');
  expect(detail.totalTokens).toBe(150);
  // Microseconds survive: the stored start equals the SDK's hrtime to the microsecond.
  const [seconds, nanos] = run.spans.find((s) => s.name === 'chat gpt-4o')!.startTime;
  expect(isoToMicros(llm.startTime)).toBe(BigInt(seconds) * 1_000_000n + BigInt(Math.floor(nanos / 1000)));
}

describe('real OpenTelemetry exporters against the listening service', () => {
  it('OTLP/HTTP JSON exporter (base path) reports success and the spans arrive mapped', async () => {
    const run = recordAgentRun('staging');
    const exporter = new JsonExporter({ url: `${base}/api/traces/otlp`, headers: { 'x-api-key': keys.a } });
    const result = await exportWith(exporter, run.spans);
    expect(result.error).toBeUndefined();
    expect(result.code).toBe(0);
    await exporter.shutdown();
    await expectAgentRun(run, 'staging');
  });

  it('OTLP/HTTP protobuf exporter, gzip, at /v1/traces reports success and the spans arrive mapped', async () => {
    const run = recordAgentRun('production');
    const exporter = new ProtoExporter({
      url: `${base}/api/traces/otlp/v1/traces`,
      headers: { 'x-api-key': keys.a },
      compression: 'gzip' as never,
    });
    const result = await exportWith(exporter, run.spans);
    expect(result.error).toBeUndefined();
    expect(result.code).toBe(0);
    await exporter.shutdown();
    await expectAgentRun(run, 'production');
  });

  it('keeps each workspace to itself, and an exporter with a bad key fails', async () => {
    const run = recordAgentRun('development');
    const exporter = new ProtoExporter({ url: `${base}/api/traces/otlp/v1/traces`, headers: { 'x-api-key': keys.b } });
    expect((await exportWith(exporter, run.spans)).code).toBe(0);
    await exporter.shutdown();
    expect((await fetchTrace(run.traceId, keys.a)).status).toBe(404);
    expect((await fetchTrace(run.traceId, keys.b)).status).toBe(200);

    const denied = new JsonExporter({ url: `${base}/api/traces/otlp`, headers: { 'x-api-key': 'lpk_not_a_key_at_all_0000' } });
    expect((await exportWith(denied, recordAgentRun('development').spans)).code).toBe(1);
    await denied.shutdown();
  });
});
