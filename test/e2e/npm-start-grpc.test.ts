import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Metadata } from '@grpc/grpc-js';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { freePort } from '../../src/stores/postgres.js';
import { startService, type ServiceProcess } from '../support/process.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-grpc-'));
const apiKey = 'lpk_e2e_grpc_bootstrap_key_0123456789';
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('npm start with LOUPE_OTLP_GRPC_PORT', () => {
  it('serves OTLP/gRPC beside HTTP with the same keys, and stops both on SIGTERM', async () => {
    // A free port rather than 4317: other test processes run at the same time.
    const grpcPort = await freePort();
    service = await startService({
      LOUPE_DATA_DIR: dataDir,
      LOUPE_BOOTSTRAP_API_KEY: apiKey,
      LOUPE_OTLP_GRPC_PORT: String(grpcPort),
      LOG_LEVEL: 'info',
    });
    expect(service.output()).toContain(`"otlpGrpcPort":${grpcPort}`);

    const memory = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer('npm-start');
    const span = tracer.startSpan('chat gpt-4o', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' } });
    span.end();
    const metadata = new Metadata();
    metadata.set('x-api-key', apiKey);
    const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${grpcPort}`, metadata });
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(memory.getFinishedSpans(), resolve));
    expect(result.error).toBeUndefined();
    await exporter.shutdown();

    const res = await fetch(`${service.baseUrl}/api/traces/${span.spanContext().traceId}`, { headers: { 'x-api-key': apiKey } });
    expect(res.status).toBe(200);
    expect((await res.json()).data).toMatchObject({ source: 'otel', spanCount: 1, model: 'gpt-4o' });

    expect(await service.stop()).toBe(0);
    service = undefined;
    expect(await listening(grpcPort)).toBe(false);
  }, 180_000);
});
