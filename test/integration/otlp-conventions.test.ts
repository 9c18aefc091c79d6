import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calcPrice } from '@pydantic/genai-prices';
import { createTestContext, type TestContext, type Tenant } from '../support/app.js';

/**
 * The conventions of real traffic (docs/api.md, OpenTelemetry), one class of loss each, with
 * hand-made spans in another library's attribute names than the captured case that showed
 * it: so the rule is the convention's, not the case's.
 */

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

type Span = Record<string, any>;
type Attr = string | number | boolean;
let traceCounter = 0x1000;
const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');
const value = (v: Attr) =>
  typeof v === 'string'
    ? { stringValue: v }
    : typeof v === 'boolean'
      ? { boolValue: v }
      : Number.isInteger(v)
        ? { intValue: v }
        : { doubleValue: v };
const attributes = (attrs: Record<string, Attr>) => Object.entries(attrs).map(([key, v]) => ({ key, value: value(v) }));
const t0 = 1_780_000_000_000_000_000n;
const at = (ms: number) => String(t0 + BigInt(Math.round(ms * 1e6)));

interface SpanSpec {
  id: number;
  parent?: number;
  name?: string;
  attrs: Record<string, Attr>;
  status?: { code: number; message?: string };
  events?: { name: string; ms: number; attrs?: Record<string, Attr> }[];
  startMs?: number;
  endMs?: number;
}

function otlpSpan(traceId: string, s: SpanSpec) {
  return {
    traceId,
    spanId: hex(s.id, 8),
    ...(s.parent ? { parentSpanId: hex(s.parent, 8) } : {}),
    name: s.name ?? `span-${s.id}`,
    kind: 1,
    startTimeUnixNano: at(s.startMs ?? 0),
    endTimeUnixNano: at(s.endMs ?? 500),
    attributes: attributes(s.attrs),
    ...(s.events ? { events: s.events.map((e) => ({ name: e.name, timeUnixNano: at(e.ms), attributes: attributes(e.attrs ?? {}) })) } : {}),
    ...(s.status ? { status: s.status } : {}),
  };
}

/** Sends each group of spans as its own request (a span processor exporting as spans end), then reads the trace. */
async function send(groups: SpanSpec[][]): Promise<{ trace: Record<string, any>; span: (id: number) => Span }> {
  const traceId = hex(++traceCounter, 16);
  for (const spans of groups) {
    const body = {
      resourceSpans: [
        {
          resource: { attributes: attributes({ 'service.name': 'conventions' }) },
          scopeSpans: [{ scope: { name: 'hand-made' }, spans: spans.map((s) => otlpSpan(traceId, s)) }],
        },
      ],
    };
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/otlp/v1/traces',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode, res.body).toBe(200);
  }
  const res = await ctx.app.inject({ method: 'GET', url: `/api/traces/${traceId}`, headers: tenant.headers });
  const trace = res.json().data as Record<string, any>;
  return { trace, span: (id) => trace.spans.find((s: Span) => s.spanId === hex(id, 8))! };
}

const price = (model: string, providerId: string, usage: Parameters<typeof calcPrice>[0]) =>
  calcPrice(usage, model, { providerId, timestamp: new Date(Number(t0 / 1_000_000n)) })!.total_price;

describe('counted twice: one model call recorded by two libraries counts once', () => {
  // The instrumentation's generation span (all the figures, cache reads included) around the span
  // an SDK makes of its own call, which leaves the cache out. The captured case had
  // OpenInference around the Anthropic SDK's GenAI span; here OpenLLMetry and OpenInference,
  // each way round.
  const openLlmetry = (id: number, parent: number, cache: boolean): SpanSpec => ({
    id,
    parent,
    name: 'openai.chat',
    attrs: {
      'llm.request.type': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.prompt_tokens': 1200,
      'gen_ai.usage.completion_tokens': 100,
      ...(cache ? { 'gen_ai.usage.cache_read_input_tokens': 1000 } : {}),
    },
  });
  const openInference = (id: number, parent: number, cache: boolean): SpanSpec => ({
    id,
    parent,
    name: 'OpenAI Chat',
    attrs: {
      'openinference.span.kind': 'LLM',
      'llm.provider': 'openai',
      'llm.model_name': 'gpt-4o-mini',
      'llm.token_count.prompt': 1200,
      'llm.token_count.completion': 100,
      ...(cache ? { 'llm.token_count.prompt_details.cache_read': 1000 } : {}),
    },
  });
  const root: SpanSpec = { id: 1, name: 'agent', attrs: { 'traceloop.span.kind': 'workflow' } };
  const callCost = price('gpt-4o-mini', 'openai', { input_tokens: 1200, cache_read_tokens: 1000, output_tokens: 100 });

  it('an OpenLLMetry span around an OpenInference span: one count, the outer span, equal to the trace', async () => {
    // The child arrives before its parent, the root last (one request per span).
    const { trace, span } = await send([[openInference(3, 2, false)], [openLlmetry(2, 1, true)], [root]]);
    expect(span(2)).toMatchObject({ kind: 'llm.chat', inputTokens: 1200, cacheReadTokens: 1000, costSource: 'computed' });
    expect(span(3)).toMatchObject({ kind: 'llm.chat', inputTokens: 1200 });
    expect(trace).toMatchObject({ inputTokens: 1200, outputTokens: 100, totalTokens: 1300 });
    expect(span(2).costUsd).toBeCloseTo(callCost, 12);
    expect(trace.costUsd).toBeCloseTo(span(2).costUsd, 12);
  });

  it('the other way round (OpenInference around OpenLLMetry), two calls under one agent', async () => {
    const { trace } = await send([
      [openLlmetry(3, 2, false), openLlmetry(5, 4, false)],
      [openInference(2, 1, true), openInference(4, 1, true)],
      [root],
    ]);
    expect(trace).toMatchObject({ inputTokens: 2400, outputTokens: 200, totalTokens: 2600 });
    expect(trace.costUsd).toBeCloseTo(2 * callCost, 12);
  });

  it("a root that carries its call's figures counts once, whether the generation span has them or not", async () => {
    // OpenLLMetry's workflow span written with the call's usage, over an OpenInference generation span.
    const figures = { 'gen_ai.usage.prompt_tokens': 23, 'gen_ai.usage.completion_tokens': 11 };
    const withChild = await send([
      [{ id: 1, name: 'stream', attrs: { 'traceloop.span.kind': 'workflow', ...figures } }, openInference(2, 1, true)],
    ]);
    expect(withChild.trace).toMatchObject({ inputTokens: 1200, outputTokens: 100 });
    const bare: SpanSpec = {
      id: 2,
      parent: 1,
      name: 'OpenAI Chat',
      attrs: { 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o-mini' },
    };
    const alone = await send([[{ id: 1, name: 'stream', attrs: { 'traceloop.span.kind': 'workflow', ...figures } }, bare]]);
    expect(alone.trace).toMatchObject({ inputTokens: 23, outputTokens: 11, totalTokens: 34 });
  });
});

describe('failed calls: failed when any convention says so', () => {
  it('an exception event on a span whose status is unset (OpenLLMetry names): error, message from the event', async () => {
    const { span } = await send([
      [
        {
          id: 1,
          attrs: { 'llm.request.type': 'chat', 'gen_ai.request.model': 'bad-model' },
          events: [{ name: 'exception', ms: 10, attrs: { 'exception.type': 'BadRequestError', 'exception.message': '400 no such model' } }],
        },
      ],
    ]);
    expect(span(1)).toMatchObject({ status: 'error', statusMessage: '400 no such model' });
  });
  it('an explicit OK status with an exception event stays OK (the library handled it)', async () => {
    const { span } = await send([
      [
        {
          id: 1,
          attrs: { 'llm.request.type': 'chat' },
          status: { code: 1 },
          events: [{ name: 'exception', ms: 10, attrs: { 'exception.message': 'retried' } }],
        },
      ],
    ]);
    expect(span(1).status).toBe('ok');
  });
  it("Langfuse's level ERROR on an OpenInference span whose status is unset", async () => {
    const { trace, span } = await send([
      [
        {
          id: 1,
          attrs: {
            'openinference.span.kind': 'LLM',
            'llm.model_name': 'boom-500',
            'langfuse.observation.level': 'ERROR',
            'langfuse.observation.status_message': '500 server error',
          },
        },
      ],
    ]);
    expect(span(1)).toMatchObject({ status: 'error', statusMessage: '500 server error' });
    expect(trace.errorCount).toBe(1);
  });
});

describe('carriers read where libraries put them', () => {
  it("Mastra's session, user and first-token time on a GenAI span of another library", async () => {
    const { trace, span } = await send([
      [
        {
          id: 1,
          startMs: 0,
          endMs: 400,
          attrs: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o-mini',
            'mastra.metadata.sessionId': 'sess-m',
            'mastra.metadata.userId': 'user-m',
            'mastra.completion_start_time': new Date(Number(t0 / 1_000_000n) + 150).toISOString(),
          },
        },
      ],
    ]);
    expect(trace).toMatchObject({ sessionId: 'sess-m', userId: 'user-m' });
    expect(span(1).ttftMs).toBe(150);
  });
  it('the LangChain provider inside the metadata JSON (the metadata stays an attribute)', async () => {
    const metadata = JSON.stringify({ ls_provider: 'anthropic', ls_model_name: 'claude-haiku-4-5', thread_id: 't1' });
    const { span } = await send([[{ id: 1, attrs: { 'openinference.span.kind': 'LLM', 'llm.model_name': 'claude-haiku-4-5', metadata } }]]);
    expect(span(1).provider).toBe('anthropic');
    expect(span(1).attributes.metadata).toBe(metadata);
  });
  it("LangSmith's metadata (session, user, provider) and its whole request and response JSON", async () => {
    const request = {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
    };
    const response = {
      id: 'chatcmpl-1',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const { trace, span } = await send([
      [
        {
          id: 1,
          attrs: {
            'langsmith.span.kind': 'llm',
            'gen_ai.operation.name': 'chat',
            'gen_ai.system': 'langchain',
            'gen_ai.request.model': 'my-finetune',
            'langsmith.metadata.ls_provider': 'openai',
            'langsmith.metadata.session_id': 'sess-ls',
            'langsmith.metadata.user_id': 'user-ls',
            'langsmith.trace.session_id': 'project-uuid',
            'gen_ai.prompt': JSON.stringify(request),
            'gen_ai.completion': JSON.stringify(response),
          },
        },
      ],
    ]);
    expect(trace).toMatchObject({ sessionId: 'sess-ls', userId: 'user-ls' });
    expect(span(1)).toMatchObject({ kind: 'llm.chat', provider: 'openai', model: 'my-finetune' });
    expect(span(1).input.messages).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'Weather in Paris?' },
    ]);
    expect(span(1).output.messages).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
    ]);
  });
  it('LangChain messages in LangSmith run inputs and outputs (serialized and plain)', async () => {
    const human = { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: 'Hi' } };
    const ai = {
      lc: 1,
      type: 'constructor',
      id: ['langchain_core', 'messages', 'AIMessage'],
      kwargs: { content: 'Hello', tool_calls: [] },
    };
    const { span } = await send([
      [
        {
          id: 1,
          attrs: {
            'langsmith.span.kind': 'llm',
            'gen_ai.prompt': JSON.stringify({ messages: [[{ type: 'system', content: 'S' }, human]] }),
            'gen_ai.completion': JSON.stringify({ generations: [[{ text: 'Hello', message: ai }]] }),
          },
        },
      ],
    ]);
    expect(span(1).input.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(span(1).output.messages).toEqual([{ role: 'assistant', content: 'Hello' }]);
  });
  it('cache writes named `cache_write` (OpenLIT, the Anthropic SDK) on an OpenLLMetry span, and priced', async () => {
    const { span } = await send([
      [
        {
          id: 1,
          attrs: {
            'llm.request.type': 'chat',
            'gen_ai.system': 'anthropic',
            'gen_ai.request.model': 'claude-haiku-4-5',
            'gen_ai.usage.prompt_tokens': 263,
            'gen_ai.usage.completion_tokens': 11,
            'gen_ai.usage.cache_read_input_tokens': 200,
            'gen_ai.usage.cache_write.input_tokens': 40,
          },
        },
      ],
    ]);
    expect(span(1)).toMatchObject({ cacheReadTokens: 200, cacheWriteTokens: 40, costSource: 'computed' });
    expect(span(1).costUsd).toBeCloseTo(0.000148, 12);
  });
});

describe('a cost that is not one', () => {
  it('`gen_ai.usage.cost: 0` (an instrumentation without a price) is computed, a positive one is provided', async () => {
    const attrs = {
      'llm.request.type': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.prompt_tokens': 1000,
      'gen_ai.usage.completion_tokens': 100,
    };
    const { span } = await send([
      [
        { id: 1, attrs: { ...attrs, 'gen_ai.usage.cost': 0 } },
        { id: 2, attrs: { ...attrs, 'gen_ai.usage.cost': 0.5 } },
      ],
    ]);
    expect(span(1)).toMatchObject({ costSource: 'computed' });
    expect(span(1).costUsd).toBeCloseTo(price('gpt-4o-mini', 'openai', { input_tokens: 1000, output_tokens: 100 }), 12);
    expect(span(2)).toMatchObject({ costSource: 'provided', costUsd: 0.5 });
  });
  it("Loupe's own cost of zero stays a provided zero", async () => {
    const { span } = await send([
      [
        {
          id: 1,
          attrs: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o-mini',
            'gen_ai.usage.input_tokens': 5,
            'loupe.cost_usd': 0,
          },
        },
      ],
    ]);
    expect(span(1)).toMatchObject({ costSource: 'provided', costUsd: 0 });
  });
});

describe('duplicates', () => {
  it('a system prompt given as instructions and as the first input message (OpenInference messages) appears once', async () => {
    const { span } = await send([
      [
        {
          id: 1,
          attrs: {
            'openinference.span.kind': 'LLM',
            'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'Be terse.' }]),
            'llm.input_messages.0.message.role': 'system',
            'llm.input_messages.0.message.content': 'Be terse.',
            'llm.input_messages.1.message.role': 'user',
            'llm.input_messages.1.message.content': 'Hi',
          },
        },
      ],
    ]);
    expect(span(1).input.messages).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'Hi' },
    ]);
  });
  it('the same with OpenLLMetry legacy messages; a different second system message stays', async () => {
    const { span } = await send([
      [
        {
          id: 1,
          attrs: {
            'llm.request.type': 'chat',
            'gen_ai.system_instructions': 'Be terse.',
            'gen_ai.prompt.0.role': 'system',
            'gen_ai.prompt.0.content': 'Be terse.',
            'gen_ai.prompt.1.role': 'system',
            'gen_ai.prompt.1.content': 'Answer in French.',
            'gen_ai.prompt.2.role': 'user',
            'gen_ai.prompt.2.content': 'Hi',
          },
        },
      ],
    ]);
    expect(span(1).input.messages).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'Hi' },
    ]);
  });
});

describe('provider names', () => {
  it('a framework name in `gen_ai.system` is not the provider when another attribute names one, whatever the order', async () => {
    const { span } = await send([
      [
        // OpenLIT's LangChain span: the provider only from the Langfuse observation's model (a row below GenAI's).
        {
          id: 1,
          attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'langchain', 'langfuse.observation.model.name': 'claude-haiku-4-5' },
        },
        { id: 2, attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'LangChain', 'gen_ai.request.model': 'x' } },
      ],
    ]);
    expect(span(1).provider).toBe('anthropic');
    expect(span(1).attributes['gen_ai.system']).toBe('langchain');
    // Alone, it is all the span says.
    expect(span(2).provider).toBe('langchain');
  });
});
