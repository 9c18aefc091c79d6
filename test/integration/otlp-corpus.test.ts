import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type Tenant } from '../support/app.js';
import { corpusTraceIds, replayCase } from '../support/otlp-corpus.js';

/**
 * The requests real instrumentations sent (../shared/otlp-corpus: raw bodies, their content
 * type and path) replayed through the HTTP routes, checked against the literal values of each
 * case's SCENARIO.md. One `it` per case and per fact, so a failure names both.
 *
 * Every case but the long stream ran the same application: a root span `weather-agent`, then
 * (1) a chat call, (2) a streamed chat call, (3) a call answered by a tool call, the manual tool
 * span `get_weather`, (4) the follow-up call with the tool's answer, (5) an embeddings call,
 * (6) a call to `bad-model` answered 400, (7) a call to `boom-500` answered 500.
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
type Trace = Record<string, any> & { spans: Span[] };

const model = 'gpt-4o-mini-2024-07-18';
const weatherCall = { id: 'call_fake_weather_1', name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } };
const toolAnswer = '{"city": "Paris", "temperature": 18, "unit": "celsius", "sky": "sunny"}';
const badModel = "The model 'bad-model' does not exist or you do not have access to it.";
const serverError = 'The server had an error while processing your request.';

interface WeatherCase {
  folder: string;
  /** Replay order of the requests, when not their numbering. */
  order?: string[];
  /** A second tenant replays it, so two orders of one case never share a trace. */
  ownTenant?: boolean;
  session: string | null;
  service: string | null;
  provider: string | null;
  /** The provider is not sent but inferred from the model name. */
  providerFromModel?: boolean;
  /** Whether the library reports the time to first token of the stream. */
  ttft: boolean;
  /** Whether the 500 call was made (the Langfuse script made no failing 500 call). */
  has500: boolean;
  /** How the manual tool span's call arrives. */
  tool: 'call' | 'call-no-id' | 'text';
  /** Whether the embedding span's input text is recorded. */
  embeddingInput: string | null;
  /** Whether the library sends cache-read and reasoning counts (each 0 in every call). */
  details: { cacheRead: boolean; reasoning: boolean };
  rootKind: string;
}

const weatherCases: WeatherCase[] = [
  {
    folder: 'openai-v2-default',
    session: 'sess-v2',
    service: 'interop-v2',
    provider: 'openai',
    ttft: false,
    has500: true,
    tool: 'call',
    embeddingInput: null,
    details: { cacheRead: false, reasoning: false },
    rootKind: 'custom',
  },
  // The log records can arrive before the spans: the same result either way.
  {
    folder: 'openai-v2-default',
    order: ['002', '001'],
    ownTenant: true,
    session: 'sess-v2',
    service: 'interop-v2',
    provider: 'openai',
    ttft: false,
    has500: true,
    tool: 'call',
    embeddingInput: null,
    details: { cacheRead: false, reasoning: false },
    rootKind: 'custom',
  },
  {
    folder: 'openai-v2-latest',
    session: 'sess-v2-latest',
    service: 'interop-v2-latest',
    provider: 'openai',
    ttft: false,
    has500: true,
    tool: 'call',
    embeddingInput: null,
    details: { cacheRead: false, reasoning: false },
    rootKind: 'custom',
  },
  {
    folder: 'openinference-openai',
    session: 'sess-openinference',
    service: 'interop-openinference',
    provider: 'openai',
    ttft: true,
    has500: true,
    tool: 'call',
    embeddingInput: 'Loupe traces embeddings',
    details: { cacheRead: true, reasoning: true },
    rootKind: 'agent',
  },
  {
    folder: 'openllmetry-0.54',
    session: 'sess-traceloop-0.54',
    service: 'interop-traceloop-0.54',
    provider: 'openai',
    ttft: true,
    has500: true,
    tool: 'call-no-id',
    embeddingInput: 'Loupe traces embeddings',
    details: { cacheRead: true, reasoning: true },
    rootKind: 'agent',
  },
  // The SDK set no session, no user and no service name (its default `unknown_service`), and sends no provider:
  // it is the family of the model (gpt-… and text-embedding-3-… are OpenAI's; `bad-model` names none).
  {
    folder: 'langfuse-sdk',
    session: null,
    service: null,
    provider: 'openai',
    providerFromModel: true,
    ttft: true,
    has500: false,
    tool: 'text',
    embeddingInput: 'Loupe traces embeddings',
    details: { cacheRead: true, reasoning: true },
    rootKind: 'agent',
  },
];

async function loadTrace(folder: string, owner: Tenant): Promise<{ trace: Trace; statuses: number[] }> {
  const [traceId] = corpusTraceIds(folder);
  const res = await ctx.app.inject({ method: 'GET', url: `/api/traces/${traceId}`, headers: owner.headers });
  return { trace: res.json().data as Trace, statuses: [] };
}

/** The spans in start order, named by their part in the script. */
function calls(trace: Trace, c: WeatherCase) {
  const spans = [...trace.spans].sort((a, b) => a.startTime.localeCompare(b.startTime) || a.spanId.localeCompare(b.spanId));
  const [root, chat, stream, toolCall, tool, followUp, embedding, bad, boom] = spans;
  return {
    root: root!,
    chat: chat!,
    stream: stream!,
    toolCall: toolCall!,
    tool: tool!,
    followUp: followUp!,
    embedding: embedding!,
    bad: bad!,
    boom: c.has500 ? boom : undefined,
    all: spans,
  };
}

const text = (role: string, content: string) => ({ role, content });

for (const c of weatherCases) {
  const label = c.order ? `${c.folder} (requests in the order ${c.order.join(', ')})` : c.folder;
  describe(`corpus ${label}`, () => {
    let trace: Trace;
    let responses: { statusCode: number; headers: Record<string, unknown> }[];
    let s: ReturnType<typeof calls>;
    beforeAll(async () => {
      const owner = c.ownTenant ? await ctx.tenant() : tenant;
      responses = await replayCase(ctx.app, owner, c.folder, c.order);
      trace = (await loadTrace(c.folder, owner)).trace;
      s = calls(trace, c);
    });

    it('accepts every request whole (protobuf answer, no partial success)', () => {
      for (const res of responses) {
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('application/x-protobuf');
      }
    });
    it('stores every span', () => {
      expect(trace.spanCount).toBe(c.has500 ? 9 : 8);
    });
    it('the tree: one root weather-agent, every other span its child', () => {
      expect(s.root.name).toBe('weather-agent');
      expect(s.root.parentSpanId).toBeUndefined();
      for (const span of s.all.slice(1)) expect(span.parentSpanId).toBe(s.root.spanId);
    });
    it('trace name', () => expect(trace.name).toBe('weather-agent'));
    it('session', () => expect(trace.sessionId).toBe(c.session));
    it('environment', () => expect(trace.environment).toBe('interop'));
    it('service', () => expect(trace.service).toBe(c.service));
    it('kinds', () => {
      expect(s.root.kind).toBe(c.rootKind);
      for (const span of [s.chat, s.stream, s.toolCall, s.followUp, s.bad, ...(s.boom ? [s.boom] : [])]) expect(span.kind).toBe('llm.chat');
      expect(s.tool).toMatchObject({ name: 'get_weather', kind: 'tool' });
      expect(s.embedding.kind).toBe('llm.embedding');
    });
    it('models', () => {
      for (const span of [s.chat, s.stream, s.toolCall, s.followUp]) expect(span.model).toBe(model);
      expect(s.embedding.model).toBe('text-embedding-3-small');
      expect(s.bad.model).toBe('bad-model');
      if (s.boom) expect(s.boom.model).toBe('boom-500');
      expect(trace.model).toBe(model);
    });
    it('providers', () => {
      for (const span of [s.chat, s.stream, s.toolCall, s.followUp, s.embedding]) expect(span.provider).toBe(c.provider ?? undefined);
      expect(s.bad.provider).toBe(c.providerFromModel ? undefined : (c.provider ?? undefined));
    });
    it('token counts (23/11/34, 61/18/79, embeddings 7/7) and the trace sums', () => {
      for (const span of [s.chat, s.stream, s.followUp]) expect(span).toMatchObject({ inputTokens: 23, outputTokens: 11, totalTokens: 34 });
      expect(s.toolCall).toMatchObject({ inputTokens: 61, outputTokens: 18, totalTokens: 79 });
      expect(s.embedding).toMatchObject({ inputTokens: 7, totalTokens: 7 });
      expect(s.embedding.outputTokens).toBeUndefined();
      expect(trace).toMatchObject({ inputTokens: 137, outputTokens: 51, totalTokens: 188 });
    });
    it('cache-read and reasoning counts where the library sends them (all 0)', () => {
      for (const span of [s.chat, s.toolCall, s.followUp]) {
        expect(span.cacheReadTokens).toBe(c.details.cacheRead ? 0 : undefined);
        expect(span.reasoningTokens).toBe(c.details.reasoning ? 0 : undefined);
      }
    });
    it('time to first token of the stream (first chunk at ~150 ms, the span ~366 ms)', () => {
      if (!c.ttft) {
        expect(s.stream.ttftMs).toBeUndefined();
        return;
      }
      expect(s.stream.ttftMs).toBeGreaterThanOrEqual(145);
      expect(s.stream.ttftMs).toBeLessThan(s.stream.durationMs);
      for (const span of [s.chat, s.toolCall, s.followUp]) expect(span.ttftMs).toBeUndefined();
    });
    it('messages of call 1 (system, user; the answer)', () => {
      expect(s.chat.input.messages).toEqual([text('system', 'You are a terse assistant.'), text('user', 'Say hello to Loupe')]);
      expect(s.chat.output.messages).toEqual([text('assistant', 'Fake answer to: Say hello to Loupe')]);
    });
    it('messages of the stream', () => {
      expect(s.stream.input.messages).toEqual([text('user', 'Stream a short greeting')]);
      expect(s.stream.output.messages).toEqual([text('assistant', 'Fake answer to: Stream a short greeting')]);
    });
    it('the tool call answered by call 3', () => {
      expect(s.toolCall.input.messages).toEqual([text('user', 'What is the weather in Paris?')]);
      expect(s.toolCall.output.messages).toEqual([{ role: 'assistant', content: '', toolCalls: [weatherCall] }]);
    });
    it('the tool span', () => {
      if (c.tool === 'text') {
        expect(JSON.parse(s.tool.input.text)).toEqual({ city: 'Paris', unit: 'celsius' });
        expect(JSON.parse(s.tool.output.text)).toMatchObject({ city: 'Paris', temperature: 18 });
        return;
      }
      const call = c.tool === 'call' ? weatherCall : { ...weatherCall, id: '' };
      expect(s.tool.input.toolCalls).toEqual([call]);
      expect(s.tool.output.toolCalls).toEqual([{ ...call, result: { city: 'Paris', temperature: 18, unit: 'celsius', sky: 'sunny' } }]);
    });
    it('messages of the follow-up in order: user, the assistant turn with its tool call, the tool answer', () => {
      const [user, assistant, tool] = s.followUp.input.messages;
      expect(s.followUp.input.messages).toHaveLength(3);
      expect(user).toEqual(text('user', 'What is the weather in Paris?'));
      expect(assistant).toEqual({ role: 'assistant', content: '', toolCalls: [weatherCall] });
      expect(tool).toMatchObject({ role: 'tool', toolCallId: 'call_fake_weather_1' });
      expect(JSON.parse(tool.content)).toMatchObject({ city: 'Paris', temperature: 18 });
      if (c.folder !== 'langfuse-sdk') expect(tool.content).toBe(toolAnswer);
      expect(s.followUp.input.toolCalls).toBeUndefined();
      expect(s.followUp.output.messages).toEqual([text('assistant', 'It is 18 degrees Celsius and sunny in Paris.')]);
    });
    it('the embeddings call: input text when sent, no vector stored whole', () => {
      if (c.embeddingInput !== null) {
        const input = s.embedding.input;
        expect(input.text ?? input.messages?.[0]?.content).toBe(c.embeddingInput);
      }
      const stored = JSON.stringify(s.embedding);
      expect(stored).not.toContain('0.019999999552965164');
      expect(stored).not.toContain('CtcjPArXozyPwvU8CtcjPc3MTD2PwnU9KVyPPQrXoz0=');
    });
    it('statuses and error messages', () => {
      for (const span of [s.chat, s.stream, s.toolCall, s.followUp, s.embedding]) expect(span.status).not.toBe('error');
      expect(s.bad).toMatchObject({ status: 'error' });
      expect(s.bad.statusMessage).toContain(badModel);
      expect(s.bad.input.messages).toEqual([text('user', 'this will fail')]);
      if (s.boom) {
        expect(s.boom.status).toBe('error');
        expect(s.boom.statusMessage).toContain(serverError);
        expect(s.boom.input.messages).toEqual([text('user', 'this will 500')]);
      }
      expect(trace.errorCount).toBe(c.has500 ? 2 : 1);
    });
    it('raw request and response JSON not stored beside the mapped messages', () => {
      for (const span of [s.chat, s.stream, s.toolCall, s.followUp]) {
        expect(span.input.text).toBeUndefined();
        expect(span.output.text).toBeUndefined();
        expect(span.attributes?.['input.value']).toBeUndefined();
        expect(span.attributes?.['output.value']).toBeUndefined();
      }
    });
  });
}

describe('corpus openllmetry-long-stream', () => {
  let trace: Trace;
  let stream: Span;
  let status: number;
  beforeAll(async () => {
    const [res] = await replayCase(ctx.app, tenant, 'openllmetry-long-stream');
    status = res!.statusCode;
    trace = (await loadTrace('openllmetry-long-stream', tenant)).trace;
    stream = trace.spans.find((span) => span.name === 'openai.chat')!;
  });

  it('accepts the request whole', () => expect(status).toBe(200));
  it('stores both spans (the span with 1,203 events is not lost)', () => expect(trace.spanCount).toBe(2));
  it('the tree', () => {
    const root = trace.spans.find((span) => span.name === 'long-stream-agent')!;
    expect(root.parentSpanId).toBeUndefined();
    expect(stream.parentSpanId).toBe(root.spanId);
  });
  it('trace name and service, no environment', () => {
    expect(trace).toMatchObject({ name: 'long-stream-agent', service: 'interop-long-traceloop', environment: null, sessionId: null });
  });
  it('keeps the first 1,000 events and counts the other 203', () => {
    expect(stream.events).toHaveLength(1000);
    expect(stream.events[0].name).toBe('gen_ai.content.completion.chunk');
    expect(stream.droppedEvents).toBe(203);
  });
  it('kind, model, provider, status', () => {
    expect(stream).toMatchObject({ kind: 'llm.chat', model, provider: 'openai', status: 'ok' });
  });
  it('token counts 23/11/34', () => expect(stream).toMatchObject({ inputTokens: 23, outputTokens: 11, totalTokens: 34 }));
  it('time to first token from the first chunk event (~150 ms)', () => {
    expect(stream.ttftMs).toBeGreaterThanOrEqual(145);
    expect(stream.ttftMs).toBeLessThan(stream.durationMs);
  });
  it('messages: the question and the whole 1,200-word answer', () => {
    expect(stream.input.messages).toEqual([text('user', 'LONG please')]);
    const answer = stream.output.messages[0].content as string;
    expect(stream.output.messages[0].role).toBe('assistant');
    expect(answer.split(' ')).toHaveLength(1200);
    expect(answer.startsWith('word0 word1 ')).toBe(true);
    expect(answer.endsWith(' word1199')).toBe(true);
  });
});
