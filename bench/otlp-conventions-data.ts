/**
 * OTLP/JSON exports whose spans are written in the conventions of real traffic (the mapping
 * bench's corpus for them): 64 traces of 8 spans each, a LangSmith root carrying its call's
 * figures, a LangSmith generation with its whole request and response JSON, the LangChain
 * instrumentation's span with its metadata JSON, a Mastra chat span with its carriers and a
 * system prompt sent twice, an LLM SDK's own span with cache writes under its instrumentation's
 * span, an unpriced `gen_ai.usage.cost: 0`, a failure told by an exception event, and one by
 * Langfuse's level.
 */

type Value = string | number;
const attrs = (values: Record<string, Value>) =>
  Object.entries(values).map(([key, v]) => ({
    key,
    value: typeof v === 'string' ? { stringValue: v } : Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v },
  }));

const system = 'You are a terse assistant that answers questions about the weather.';
const question = 'What is the weather in Paris, and should I take an umbrella?';
const request = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: question },
  ],
  tools: [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ],
});
const response = JSON.stringify({
  id: 'chatcmpl-bench',
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
  usage: { prompt_tokens: 61, completion_tokens: 18, total_tokens: 79 },
});
const metadata = JSON.stringify({
  ls_provider: 'openai',
  ls_model_name: 'gpt-4o-mini',
  ls_model_type: 'chat',
  ls_temperature: 0.2,
  thread_id: 'thread-1',
});
const genAiInput = JSON.stringify([
  { role: 'system', parts: [{ type: 'text', content: system }] },
  { role: 'user', parts: [{ type: 'text', content: question }] },
]);
const genAiOutput = JSON.stringify([
  { role: 'assistant', parts: [{ type: 'text', content: 'Rain at 4 pm: take an umbrella.' }], finish_reason: 'stop' },
]);

export function conventionsRequest(request_: number) {
  const base = 1_780_000_000_000_000_000n + BigInt(request_) * 1_000_000_000n;
  const spans = [];
  for (let t = 0; t < 64; t++) {
    const traceId = `${(request_ + 1).toString(16).padStart(16, '0')}${(t + 1).toString(16).padStart(16, '0')}`;
    const spanId = (n: number) => `${(t + 1).toString(16).padStart(12, '0')}${n.toString(16).padStart(4, '0')}`;
    const time = (ms: number) => String(base + BigInt(t) * 10_000_000n + BigInt(ms) * 1_000_000n);
    const span = (
      n: number,
      parent: number | undefined,
      name: string,
      values: Record<string, Value>,
      extra: Record<string, unknown> = {},
    ) => ({
      traceId,
      spanId: spanId(n),
      ...(parent === undefined ? {} : { parentSpanId: spanId(parent) }),
      name,
      kind: 1,
      startTimeUnixNano: time(n),
      endTimeUnixNano: time(n + 400),
      attributes: attrs(values),
      ...extra,
    });
    const usage = { 'gen_ai.usage.input_tokens': 61, 'gen_ai.usage.output_tokens': 18 };
    spans.push(
      span(1, undefined, 'weather-agent', {
        'langsmith.span.kind': 'chain',
        'gen_ai.operation.name': 'chain',
        'langsmith.metadata.session_id': `sess-${t}`,
        'langsmith.metadata.user_id': 'user-1',
        'langsmith.trace.session_id': 'project-1',
        'gen_ai.prompt': JSON.stringify({ question }),
        'gen_ai.completion': JSON.stringify({
          output: { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'AIMessage'], kwargs: { content: 'Take an umbrella.' } },
        }),
        ...usage,
      }),
      span(2, 1, 'ChatOpenAI', {
        'langsmith.span.kind': 'llm',
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'langchain',
        'gen_ai.request.model': 'gpt-4o-mini',
        'langsmith.metadata.ls_provider': 'openai',
        'gen_ai.prompt': request,
        'gen_ai.completion': response,
        ...usage,
      }),
      span(3, 1, 'ChatOpenAI', {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o-mini',
        metadata,
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': question,
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.content': 'Take an umbrella.',
        'llm.token_count.prompt': 23,
        'llm.token_count.completion': 11,
      }),
      span(4, 1, 'chat gpt-4o-mini', {
        'gen_ai.operation.name': 'chat',
        'mastra.span.type': 'model_inference',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.system_instructions': system,
        'gen_ai.input.messages': genAiInput,
        'gen_ai.output.messages': genAiOutput,
        'mastra.metadata.sessionId': `sess-${t}`,
        'mastra.metadata.userId': 'user-1',
        'mastra.completion_start_time': new Date(Number((base + BigInt(t) * 10_000_000n) / 1_000_000n) + 154).toISOString(),
        ...usage,
      }),
      span(5, 3, 'anthropic.messages.create', {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': 'claude-haiku-4-5-20251001',
        'gen_ai.usage.input_tokens': 263,
        'gen_ai.usage.output_tokens': 11,
        'gen_ai.usage.cache_read.input_tokens': 200,
        'gen_ai.usage.cache_write.input_tokens': 40,
        'gen_ai.response.time_to_first_chunk': 0.15,
      }),
      span(6, 1, 'openai.chat', {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.cost': 0,
        ...usage,
      }),
      span(
        7,
        1,
        'openai.chat',
        { 'llm.request.type': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'bad-model' },
        {
          events: [
            {
              name: 'exception',
              timeUnixNano: time(9),
              attributes: attrs({ 'exception.type': 'BadRequestError', 'exception.message': "400 The model 'bad-model' does not exist" }),
            },
          ],
        },
      ),
      span(8, 1, 'OpenAI.chat', {
        'langfuse.observation.type': 'generation',
        'langfuse.observation.model.name': 'boom-500',
        'langfuse.observation.level': 'ERROR',
        'langfuse.observation.status_message': 'Error: 500 The server had an error',
        'langfuse.observation.input': JSON.stringify({ messages: [{ role: 'user', content: 'this will 500' }] }),
      }),
    );
  }
  return {
    resourceSpans: [
      {
        resource: { attributes: attrs({ 'service.name': 'bench-conventions', 'deployment.environment.name': 'bench' }) },
        scopeSpans: [{ scope: { name: 'bench' }, spans }],
      },
    ],
  };
}
