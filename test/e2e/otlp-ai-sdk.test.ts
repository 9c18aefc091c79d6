import { AsyncLocalStorage } from 'node:async_hooks';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { context, ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { buildApp } from '../../src/app.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { openTestStores, type TestStores } from '../support/stores.js';

/** The ai SDK nests its spans through the active context, which needs an async context manager. */
class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active() {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A) {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]) => this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable() {
    return this;
  }
  disable() {
    this.storage.disable();
    return this;
  }
}

let stores: TestStores;
let app: FastifyInstance;
let base: string;
let key: string;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncContextManager().enable());
  stores = await openTestStores();
  app = await buildApp({ config: stores.config, sql: stores.sql, clickhouse: stores.clickhouse });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const org = await tenancy.createOrganization(stores.sql, { name: 'otlp-ai-sdk', plan: 'pro' });
  const workspace = await tenancy.createWorkspace(stores.sql, org.id, 'main');
  key = (await tenancy.createApiKey(stores.sql, { scope: 'workspace', organizationId: org.id, workspaceId: workspace.id })).key;
});
afterAll(async () => {
  context.disable();
  await app?.close();
  await stores?.close();
});

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

describe('GenAI spans of an instrumented library (the ai SDK telemetry, mock model)', () => {
  it('arrive as a chain with llm.chat and tool spans, model, provider, tokens and messages', async () => {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'ai-sdk-app', 'deployment.environment.name': 'development' }),
      spanProcessors: [new SimpleSpanProcessor(memory)],
    });
    const model = new MockLanguageModelV3({
      provider: 'mock-provider',
      modelId: 'mock-model',
      doGenerate: [
        {
          content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'weather', input: '{"city":"Oslo"}' }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: usage(20, 8),
          warnings: [],
        },
        {
          content: [{ type: 'text', text: 'It is 3 degrees in Oslo.' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: usage(40, 10),
          warnings: [],
        },
      ],
    });
    const result = await generateText({
      model,
      system: 'Be brief.',
      prompt: 'Weather in Oslo?',
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, celsius: 3 }) }) },
      stopWhen: stepCountIs(3),
      experimental_telemetry: { isEnabled: true, tracer: provider.getTracer('ai'), functionId: 'weather' },
    });
    expect(result.text).toBe('It is 3 degrees in Oslo.');
    const spans: ReadableSpan[] = memory.getFinishedSpans();
    expect(spans.length).toBeGreaterThanOrEqual(4);

    const exporter = new OTLPTraceExporter({ url: `${base}/api/traces/otlp/v1/traces`, headers: { 'x-api-key': key } });
    const exported = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans, resolve));
    expect(exported.error).toBeUndefined();
    expect(exported.code).toBe(0);
    await exporter.shutdown();

    const traceId = spans[0]!.spanContext().traceId;
    const res = await fetch(`${base}/api/traces/${traceId}`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    const detail = ((await res.json()) as { data: any }).data;
    expect(detail).toMatchObject({
      source: 'otel',
      environment: 'development',
      name: 'ai.generateText',
      traceKind: 'chain',
      spanCount: spans.length,
    });

    const root = detail.spans.find((s: any) => s.kind === 'chain');
    const calls = detail.spans.filter((s: any) => s.kind === 'llm.chat');
    const toolSpan = detail.spans.find((s: any) => s.kind === 'tool');
    expect(root.input.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo?' },
    ]);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call).toMatchObject({ parentSpanId: root.spanId, model: 'mock-model', provider: 'mock-provider' });
    }
    const [first, second] = [...calls].sort((a: any, b: any) => a.startTime.localeCompare(b.startTime));
    const call = { id: 'call-1', name: 'weather', arguments: { city: 'Oslo' } };
    expect(first).toMatchObject({
      inputTokens: 20,
      outputTokens: 8,
      totalTokens: 28,
      output: { messages: [{ role: 'assistant', content: '', toolCalls: [call] }] },
    });
    expect(first.input.messages).toContainEqual({ role: 'user', content: 'Weather in Oslo?' });
    expect(second).toMatchObject({
      inputTokens: 40,
      outputTokens: 10,
      output: { messages: [{ role: 'assistant', content: 'It is 3 degrees in Oslo.' }] },
    });
    // The call after the tool call keeps the conversation in order: the assistant turn with its calls, then the answer.
    expect(second.input.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', content: '{"city":"Oslo","celsius":3}', toolCallId: 'call-1' },
    ]);
    // The wrapper span repeats its children's model and usage: they stay attributes, so no extra model group.
    expect(root.kind).toBe('chain');
    expect(root.model).toBeUndefined();
    expect(root.inputTokens).toBeUndefined();
    expect(toolSpan).toMatchObject({
      parentSpanId: root.spanId,
      input: { toolCalls: [{ id: 'call-1', name: 'weather', arguments: { city: 'Oslo' } }] },
      output: { toolCalls: [{ id: 'call-1', name: 'weather', result: { city: 'Oslo', celsius: 3 } }] },
    });
    // Generation spans carry the usage; the chain's repeated totals are not counted twice.
    expect(detail.inputTokens).toBe(60);
    expect(detail.outputTokens).toBe(18);
  });
});
