import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { connect as connectHttp2 } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { credentials, Metadata, status as GrpcCode, type Client, type ServiceError, makeGenericClientConstructor } from '@grpc/grpc-js';
import { context, diag, DiagLogLevel, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { buildApp, credentialCacheFor } from '../../src/app.js';
import { createGrpcAdmission } from '../../src/grpc-access.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { createRateLimiter } from '../../src/tenancy/service/rate-limit.js';
import { createFailedAuthLimiter } from '../../src/tenancy/service/failed-auth.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import {
  logsExportPath,
  startOtlpGrpcServer,
  streamWindowBytes,
  traceExportPath,
  type OtlpGrpcServer,
} from '../../src/traces/api/grpc/server.js';
import { retryDelayOf } from '../../src/traces/api/grpc/status.js';
import { decodeProtobufResponse, encodeProtobufRequest } from '../../src/traces/ingest/otlp/wire/protobuf.js';
import { openTestStores, type TestStores } from '../support/stores.js';

/** Small enough that a test batch can pass it, large enough for every ordinary one. */
const bodyLimit = 256 * 1024;

let stores: TestStores;
let app: FastifyInstance;
let writer: WriteBatcher;
let grpc: OtlpGrpcServer;
let base: string;
let grpcUrl: string;
const log = pino({ level: 'silent' });

interface Tenant {
  organizationId: string;
  workspaceId: string;
  key: string;
}
let a: Tenant;
let b: Tenant;

async function newTenant(options: { perMinute?: number } = {}): Promise<Tenant> {
  const org = await tenancy.createOrganization(stores.sql, {
    name: `grpc-${randomBytes(4).toString('hex')}`,
    ...(options.perMinute ? { plan: 'enterprise', rateLimitPerMinute: options.perMinute, rateLimitPerDay: 100_000 } : { plan: 'pro' }),
  });
  const workspace = await tenancy.createWorkspace(stores.sql, org.id, 'main');
  const { key } = await tenancy.createApiKey(stores.sql, { scope: 'workspace', organizationId: org.id, workspaceId: workspace.id });
  return { organizationId: org.id, workspaceId: workspace.id, key };
}

beforeAll(async () => {
  stores = await openTestStores({ LOUPE_BODY_LIMIT: String(bodyLimit) });
  writer = new WriteBatcher(stores.writeClient);
  // As server.ts wires them: one key cache, one rate limiter, one failure count for both listeners.
  const keys = credentialCacheFor(stores.sql, stores.config, log);
  const limiter = createRateLimiter(stores.sql);
  const failedAuth = createFailedAuthLimiter();
  app = await buildApp({
    config: stores.config,
    sql: stores.sql,
    clickhouse: stores.clickhouse,
    writer,
    keys,
    admit: limiter.admit,
    failedAuth,
    consoleDir: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  grpc = await startOtlpGrpcServer({
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: bodyLimit,
    ingest: app.traceIngest,
    admit: createGrpcAdmission({ sql: stores.sql, keys, limiter, failedAuth }),
    log,
    recordScores: app.recordOtelScores,
  });
  grpcUrl = `http://127.0.0.1:${grpc.port}`;
  a = await newTenant();
  b = await newTenant();
});
afterAll(async () => {
  await grpc?.stop();
  await app?.close();
  await writer?.close();
  await stores?.close();
});

function tracerWith(memory: InMemorySpanExporter, environment: string): Tracer {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'grpc-agent', 'deployment.environment.name': environment }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  return provider.getTracer('grpc-instrumentation', '0.2.0');
}

/** One small agent run recorded with the real SDK: an agent span, an LLM call and a failing tool. */
function recordAgentRun(environment: string, padding = ''): { spans: ReadableSpan[]; traceId: string } {
  const memory = new InMemorySpanExporter();
  const tracer = tracerWith(memory, environment);
  const root = tracer.startSpan('invoke_agent helper', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'helper', 'gen_ai.conversation.id': 'conv-grpc' },
  });
  const inRoot = trace.setSpan(context.active(), root);
  const llm = tracer.startSpan(
    'chat gpt-4o',
    {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `Weather in Oslo?${padding}` }] }]),
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Cold.' }] }]),
      },
    },
    inRoot,
  );
  llm.setStatus({ code: SpanStatusCode.OK });
  llm.end();
  const tool = tracer.startSpan(
    'execute_tool get_weather',
    { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather' } },
    inRoot,
  );
  tool.recordException(new Error('weather service timed out'));
  tool.setStatus({ code: SpanStatusCode.ERROR });
  tool.end();
  root.end();
  return { spans: memory.getFinishedSpans(), traceId: root.spanContext().traceId };
}

function exportWith(exporter: SpanExporter, spans: ReadableSpan[]) {
  return new Promise<{ code: number; error?: Error & { code?: number } }>((resolve) => exporter.export(spans, resolve));
}

function keyMetadata(entries: Record<string, string>) {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(entries)) metadata.set(key, value);
  return metadata;
}

const grpcExporter = (entries: Record<string, string>, compression?: 'gzip') =>
  new GrpcExporter({ url: grpcUrl, metadata: keyMetadata(entries), ...(compression ? { compression: compression as never } : {}) });

async function fetchTrace(traceId: string, key: string) {
  const res = await fetch(`${base}/api/traces/${traceId}`, { headers: { 'x-api-key': key } });
  return { status: res.status, body: (await res.json()) as { data: any } };
}

/** A trace's detail without what differs between two runs of the same code (ids, times). */
function comparable(detail: any) {
  const names = new Map<string, string>(detail.spans.map((s: any) => [s.spanId, s.name]));
  const drop = (value: any): any => {
    if (Array.isArray(value)) return value.map(drop);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !/^(traceId|spanId|startTime|endTime|durationMs|createdAt|updatedAt|time|timestamp|latencyMs)$/.test(key))
        .map(([key, v]) => (key === 'parentSpanId' ? [key, names.get(v as string)] : [key, drop(v)])),
    );
  };
  return { ...drop(detail), spans: drop([...detail.spans].sort((x: any, y: any) => x.name.localeCompare(y.name))) };
}

/** A raw call of an Export method, for what the exporters do not show (answers, trailers, bombs). */
function rawExport(path: string, body: Buffer, metadata: Metadata, options: { gzip?: boolean } = {}) {
  const Constructor = makeGenericClientConstructor({}, 'RawExport');
  const client: Client = new Constructor(
    `127.0.0.1:${grpc.port}`,
    credentials.createInsecure(),
    options.gzip ? { 'grpc.default_compression_algorithm': 2 } : {},
  );
  return new Promise<{ error: ServiceError | null; answer?: Buffer }>((resolve) => {
    client.makeUnaryRequest(
      path,
      (m: Buffer) => m,
      (m: Buffer) => m,
      body,
      metadata,
      (error, answer) => {
        client.close();
        resolve({ error, answer: answer ?? undefined });
      },
    );
  });
}

describe('OTLP/gRPC with the real OpenTelemetry exporters', () => {
  it('stores a trace exported over gRPC exactly as the same run exported over OTLP/HTTP protobuf', async () => {
    // Recorded from one call site, so even the exception's stack trace is the same.
    const [overGrpc, overHttp] = [1, 2].map(() => recordAgentRun('production')) as [
      ReturnType<typeof recordAgentRun>,
      ReturnType<typeof recordAgentRun>,
    ];
    const exporter = grpcExporter({ 'x-api-key': a.key });
    const result = await exportWith(exporter, overGrpc.spans);
    expect(result.error).toBeUndefined();
    expect(result.code).toBe(0);
    await exporter.shutdown();
    const http = new ProtoExporter({ url: `${base}/api/traces/otlp/v1/traces`, headers: { 'x-api-key': a.key } });
    expect((await exportWith(http, overHttp.spans)).code).toBe(0);
    await http.shutdown();

    const viaGrpc = await fetchTrace(overGrpc.traceId, a.key);
    const viaHttp = await fetchTrace(overHttp.traceId, a.key);
    expect(viaGrpc.status).toBe(200);
    expect(viaGrpc.body.data).toMatchObject({
      source: 'otel',
      environment: 'production',
      sessionId: 'conv-grpc',
      traceKind: 'agent',
      spanCount: 3,
      totalTokens: 150,
    });
    const tool = viaGrpc.body.data.spans.find((s: any) => s.name === 'execute_tool get_weather');
    expect(tool).toMatchObject({ kind: 'tool', status: 'error', statusMessage: 'weather service timed out' });
    expect(comparable(viaGrpc.body.data)).toEqual(comparable(viaHttp.body.data));
  });

  it('takes gzip-compressed exports', async () => {
    const run = recordAgentRun('staging');
    const exporter = grpcExporter({ 'x-api-key': a.key }, 'gzip');
    const result = await exportWith(exporter, run.spans);
    expect(result.error).toBeUndefined();
    await exporter.shutdown();
    expect((await fetchTrace(run.traceId, a.key)).body.data).toMatchObject({ environment: 'staging', spanCount: 3 });
  });

  it('takes the Langfuse form of credentials (authorization: Basic) and an organization key with x-workspace-id', async () => {
    const run = recordAgentRun('development');
    const basic = `Basic ${Buffer.from(`pk-lf-anything:${a.key}`).toString('base64')}`;
    const exporter = grpcExporter({ authorization: basic });
    expect((await exportWith(exporter, run.spans)).code).toBe(0);
    await exporter.shutdown();
    expect((await fetchTrace(run.traceId, a.key)).status).toBe(200);

    const { key: orgKey } = await tenancy.createApiKey(stores.sql, { scope: 'organization', organizationId: a.organizationId });
    const withWorkspace = grpcExporter({ 'x-api-key': orgKey, 'x-workspace-id': a.workspaceId });
    const second = recordAgentRun('development');
    expect((await exportWith(withWorkspace, second.spans)).code).toBe(0);
    await withWorkspace.shutdown();
    expect((await fetchTrace(second.traceId, a.key)).status).toBe(200);

    const without = grpcExporter({ 'x-api-key': orgKey });
    const missing = await exportWith(without, recordAgentRun('development').spans);
    expect(missing.error?.code).toBe(GrpcCode.INVALID_ARGUMENT);
    expect(missing.error?.message).toMatch(/x-workspace-id is required/);
    await without.shutdown();
    const elsewhere = grpcExporter({ 'x-api-key': orgKey, 'x-workspace-id': b.workspaceId });
    expect((await exportWith(elsewhere, recordAgentRun('development').spans)).error?.code).toBe(GrpcCode.PERMISSION_DENIED);
    await elsewhere.shutdown();
  });

  it('keeps each workspace to itself', async () => {
    const run = recordAgentRun('production');
    const exporter = grpcExporter({ 'x-api-key': b.key });
    expect((await exportWith(exporter, run.spans)).code).toBe(0);
    await exporter.shutdown();
    expect((await fetchTrace(run.traceId, a.key)).status).toBe(404);
    expect((await fetchTrace(run.traceId, b.key)).status).toBe(200);
  });

  it('answers UNAUTHENTICATED to a bad key and to none, and stores nothing', async () => {
    const run = recordAgentRun('production');
    const bad = grpcExporter({ 'x-api-key': 'lpk_not_a_key_at_all_0000' });
    const result = await exportWith(bad, run.spans);
    expect(result.code).toBe(1);
    expect(result.error?.code).toBe(GrpcCode.UNAUTHENTICATED);
    expect(result.error?.message).toMatch(/unknown or revoked/);
    await bad.shutdown();
    const none = grpcExporter({});
    expect((await exportWith(none, run.spans)).error?.code).toBe(GrpcCode.UNAUTHENTICATED);
    await none.shutdown();
    expect((await fetchTrace(run.traceId, a.key)).status).toBe(404);
  });

  it('refuses a message over the body limit with RESOURCE_EXHAUSTED, and a gzip bomb as it inflates', async () => {
    const run = recordAgentRun('production', 'x'.repeat(bodyLimit));
    const exporter = grpcExporter({ 'x-api-key': a.key });
    const result = await exportWith(exporter, run.spans);
    expect(result.error?.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    await exporter.shutdown();
    expect((await fetchTrace(run.traceId, a.key)).status).toBe(404);

    // 64 MiB of zeros is 64 KiB gzipped: refused once it inflates past the limit, not held whole.
    const bomb = Buffer.alloc(64 * 1024 * 1024);
    expect(gzipSync(bomb).length).toBeLessThan(bodyLimit);
    const { error } = await rawExport(traceExportPath, bomb, keyMetadata({ 'x-api-key': a.key }), { gzip: true });
    expect(error?.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    expect(error?.details).toMatch(/decompresses to a size larger than/);
  });

  it('reports a batch with one invalid span as a partial success and stores the rest', async () => {
    const run = recordAgentRun('production');
    // The tool span names itself as its parent: the bridge turns that span away, keeps the others.
    const tool = run.spans.find((s) => s.name === 'execute_tool get_weather')!;
    const broken = Object.create(tool, { parentSpanContext: { value: tool.spanContext() } }) as ReadableSpan;
    const spans = run.spans.map((s) => (s === tool ? broken : s));
    const warnings: string[] = [];
    diag.setLogger(
      {
        warn: (...args: unknown[]) => warnings.push(args.map(String).join(' ')),
        error: () => {},
        info: () => {},
        debug: () => {},
        verbose: () => {},
      },
      DiagLogLevel.WARN,
    );
    try {
      const exporter = grpcExporter({ 'x-api-key': a.key });
      const result = await exportWith(exporter, spans);
      expect(result.code).toBe(0);
      await exporter.shutdown();
    } finally {
      diag.disable();
    }
    const partial = warnings.find((w) => w.includes('Partial Success'));
    expect(partial).toBeDefined();
    expect(JSON.parse(partial!.slice(partial!.indexOf('{')))).toMatchObject({ rejectedSpans: 1 });
    expect(partial).toMatch(/parentSpanId names the span itself/);
    const stored = await fetchTrace(run.traceId, a.key);
    expect(stored.body.data.spans.map((s: any) => s.name).sort()).toEqual(['chat gpt-4o', 'invoke_agent helper']);
  });

  it('lands GenAI content sent with the logs exporter on its span', async () => {
    const memory = new InMemorySpanExporter();
    const tracer = tracerWith(memory, 'production');
    const span = tracer.startSpan('chat gpt-4o-mini', {
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o-mini' },
    });
    const inSpan = trace.setSpan(context.active(), span);
    const records = new InMemoryLogRecordExporter();
    const logger = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: records })] }).getLogger('openai_v2');
    logger.emit({ eventName: 'gen_ai.user.message', body: { content: 'Weather in Paris?' }, context: inSpan });
    logger.emit({
      eventName: 'gen_ai.choice',
      body: { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Mild.' } },
      context: inSpan,
    });
    logger.emit({ body: 'a plain log line, not GenAI content', context: inSpan });
    span.end();

    const exporter = grpcExporter({ 'x-api-key': a.key }, 'gzip');
    expect((await exportWith(exporter, memory.getFinishedSpans())).code).toBe(0);
    await exporter.shutdown();
    const warnings: string[] = [];
    diag.setLogger(
      {
        warn: (...args: unknown[]) => warnings.push(args.map(String).join(' ')),
        error: () => {},
        info: () => {},
        debug: () => {},
        verbose: () => {},
      },
      DiagLogLevel.WARN,
    );
    const logExporter = new GrpcLogExporter({ url: grpcUrl, metadata: keyMetadata({ 'x-api-key': a.key }), compression: 'gzip' as never });
    const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
      logExporter.export(records.getFinishedLogRecords(), resolve),
    );
    diag.disable();
    expect(result.error).toBeUndefined();
    expect(result.code).toBe(0);
    await logExporter.shutdown();
    // The plain line is counted as rejected, not stored.
    expect(warnings.some((w) => w.includes('"rejectedLogRecords":1'))).toBe(true);

    const traceId = span.spanContext().traceId;
    const stored = (await fetchTrace(traceId, a.key)).body.data.spans[0];
    expect(stored.input).toEqual({ messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(stored.output).toMatchObject({ messages: [{ role: 'assistant', content: 'Mild.' }] });
    expect((await fetchTrace(traceId, b.key)).status).toBe(404);

    const denied = new GrpcLogExporter({ url: grpcUrl, metadata: keyMetadata({ 'x-api-key': 'lpk_not_a_key_at_all_0000' }) });
    const refused = await new Promise<{ code: number; error?: Error & { code?: number } }>((resolve) =>
      denied.export(records.getFinishedLogRecords(), resolve),
    );
    expect(refused.error?.code).toBe(GrpcCode.UNAUTHENTICATED);
    await denied.shutdown();
  });
});

describe('OTLP/gRPC evaluation events', () => {
  it('makes scores (source otel) of gen_ai.evaluation.result as a span event and as a log record', async () => {
    const memory = new InMemorySpanExporter();
    const tracer = tracerWith(memory, 'production');
    const span = tracer.startSpan('chat gpt-4o', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' } });
    span.addEvent('gen_ai.evaluation.result', {
      'gen_ai.evaluation.name': 'relevance',
      'gen_ai.evaluation.score.value': 0.8,
      'gen_ai.evaluation.score.label': 'relevant',
      'gen_ai.evaluation.explanation': 'on topic',
    });
    const inSpan = trace.setSpan(context.active(), span);
    const records = new InMemoryLogRecordExporter();
    const logger = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: records })] }).getLogger('evals');
    logger.emit({
      eventName: 'gen_ai.evaluation.result',
      attributes: { 'gen_ai.evaluation.name': 'tone', 'gen_ai.evaluation.score.label': 'polite' },
      context: inSpan,
    });
    span.end();

    const exporter = grpcExporter({ 'x-api-key': a.key });
    expect((await exportWith(exporter, memory.getFinishedSpans())).code).toBe(0);
    await exporter.shutdown();
    const logExporter = new GrpcLogExporter({ url: grpcUrl, metadata: keyMetadata({ 'x-api-key': a.key }) });
    const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
      logExporter.export(records.getFinishedLogRecords(), resolve),
    );
    expect(result.error).toBeUndefined();
    await logExporter.shutdown();

    const { traceId, spanId } = span.spanContext();
    const res = await fetch(`${base}/api/scores?traceId=${traceId}`, { headers: { 'x-api-key': a.key } });
    const scores = ((await res.json()) as { data: any[] }).data;
    const byName = Object.fromEntries(scores.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['relevance', 'tone']);
    expect(byName.relevance).toMatchObject({ dataType: 'numeric', value: 0.8, comment: 'on topic', source: 'otel', traceId, spanId });
    expect(byName.tone).toMatchObject({ dataType: 'categorical', stringValue: 'polite', source: 'otel', spanId });
    expect(byName.relevance.authorId).toEqual(expect.any(String));
    // The other workspace sees none of them.
    const other = await fetch(`${base}/api/scores?traceId=${traceId}`, { headers: { 'x-api-key': b.key } });
    expect(((await other.json()) as { data: unknown[] }).data).toEqual([]);
  });
});

describe('OTLP/gRPC answers', () => {
  it('offers exporters a receive window that takes an ordinary export at once, not 64 KiB at a time', async () => {
    const session = connectHttp2(`http://127.0.0.1:${grpc.port}`);
    try {
      const settings = await new Promise<{ initialWindowSize?: number }>((resolve, reject) => {
        session.once('remoteSettings', resolve);
        session.once('error', reject);
      });
      expect(settings.initialWindowSize).toBe(streamWindowBytes);
      expect(streamWindowBytes).toBeGreaterThanOrEqual(512 * 1024);
    } finally {
      session.destroy();
    }
  });

  it('answers an ExportTraceServiceResponse, and INVALID_ARGUMENT to bytes that are not one', async () => {
    const metadata = keyMetadata({ 'x-api-key': a.key });
    const empty = await rawExport(traceExportPath, Buffer.alloc(0), metadata);
    expect(empty.error).toBeNull();
    expect(decodeProtobufResponse(empty.answer!).partialSuccess).toBeUndefined();
    const garbage = await rawExport(traceExportPath, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), metadata);
    expect(garbage.error?.code).toBe(GrpcCode.INVALID_ARGUMENT);
    expect(garbage.error?.details).toMatch(/ExportTraceServiceRequest/);
    const logs = await rawExport(logsExportPath, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), metadata);
    expect(logs.error?.code).toBe(GrpcCode.INVALID_ARGUMENT);
  });

  it("counts exports against the organization's rate limit shared with HTTP, and says when to retry", async () => {
    const limited = await newTenant({ perMinute: 2 });
    const body = encodeProtobufRequest({ resourceSpans: [] });
    const http = await fetch(`${base}/api/traces/otlp/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'x-api-key': limited.key },
      body: new Uint8Array(body),
    });
    expect(http.status).toBe(200);
    const metadata = keyMetadata({ 'x-api-key': limited.key });
    expect((await rawExport(traceExportPath, body, metadata)).error).toBeNull();
    const over = await rawExport(traceExportPath, body, metadata);
    expect(over.error?.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    expect(over.error?.details).toMatch(/minute limit of 2 requests is used up/);
    const details = over.error?.metadata.get('grpc-status-details-bin')[0];
    expect(Buffer.isBuffer(details)).toBe(true);
    const delay = retryDelayOf(details as Buffer);
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThanOrEqual(60);
  });

  it('names LOUPE_OTLP_GRPC_PORT when its port is taken (a local Collector listens on 4317 too)', async () => {
    const keys = credentialCacheFor(stores.sql, stores.config, log);
    const taken = startOtlpGrpcServer({
      host: '127.0.0.1',
      port: grpc.port,
      maxMessageBytes: bodyLimit,
      ingest: app.traceIngest,
      admit: createGrpcAdmission({ sql: stores.sql, keys }),
      log,
    });
    await expect(taken).rejects.toThrow(/Cannot listen for OTLP\/gRPC on 127\.0\.0\.1:\d+ .*set LOUPE_OTLP_GRPC_PORT to a free port, or 0/);
  });

  it('slows an address that keeps failing, as HTTP does, while a valid key still passes', async () => {
    const keys = credentialCacheFor(stores.sql, stores.config, log);
    const failing = await startOtlpGrpcServer({
      host: '127.0.0.1',
      port: 0,
      maxMessageBytes: bodyLimit,
      ingest: app.traceIngest,
      admit: createGrpcAdmission({ sql: stores.sql, keys, failedAuth: createFailedAuthLimiter({ maxFailures: 2 }) }),
      log,
    });
    const call = (key: string) =>
      new Promise<ServiceError | null>((resolve) => {
        const Constructor = makeGenericClientConstructor({}, 'RawExport');
        const client: Client = new Constructor(`127.0.0.1:${failing.port}`, credentials.createInsecure());
        client.makeUnaryRequest(
          traceExportPath,
          (m: Buffer) => m,
          (m: Buffer) => m,
          Buffer.alloc(0),
          keyMetadata({ 'x-api-key': key }),
          (error) => {
            client.close();
            resolve(error);
          },
        );
      });
    try {
      expect((await call('lpk_guess_one_0000000000'))?.code).toBe(GrpcCode.UNAUTHENTICATED);
      expect((await call('lpk_guess_two_0000000000'))?.code).toBe(GrpcCode.UNAUTHENTICATED);
      const third = await call('lpk_guess_three_000000000');
      expect(third?.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
      expect(third?.details).toMatch(/Too many failed authentication attempts/);
      expect(retryDelayOf(third?.metadata.get('grpc-status-details-bin')[0] as Buffer)).toBeGreaterThan(0);
      expect(await call(a.key)).toBeNull();
    } finally {
      await failing.stop();
    }
  });
});
