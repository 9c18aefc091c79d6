import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  fieldRows,
  ioRows,
  kindRows,
  mapIO,
  mapKind,
  mapMetrics,
  mapTraceFields,
  traceFieldRows,
} from '../../src/traces/ingest/otlp/mapping/mapping.js';

// One case per row of each table, named by the row; a test below checks none is missing.

const kindCases: Record<string, { attrs: Record<string, unknown>; kind: string }> = {
  'loupe.span.kind=*': { attrs: { 'loupe.span.kind': 'workflow', 'gen_ai.operation.name': 'chat' }, kind: 'workflow' },
  'gen_ai.operation.name=chat': { attrs: { 'gen_ai.operation.name': 'chat' }, kind: 'llm.chat' },
  'gen_ai.operation.name=generate_content': { attrs: { 'gen_ai.operation.name': 'generate_content' }, kind: 'llm.chat' },
  'gen_ai.operation.name=text_completion': { attrs: { 'gen_ai.operation.name': 'text_completion' }, kind: 'llm.completion' },
  'gen_ai.operation.name=embeddings': { attrs: { 'gen_ai.operation.name': 'embeddings' }, kind: 'llm.embedding' },
  'gen_ai.operation.name=execute_tool': { attrs: { 'gen_ai.operation.name': 'execute_tool' }, kind: 'tool' },
  'gen_ai.operation.name=invoke_agent': { attrs: { 'gen_ai.operation.name': 'invoke_agent' }, kind: 'agent' },
  'gen_ai.operation.name=create_agent': { attrs: { 'gen_ai.operation.name': 'create_agent' }, kind: 'agent' },
  'gen_ai.operation.name=retrieval': { attrs: { 'gen_ai.operation.name': 'retrieval', 'llm.request.type': 'chat' }, kind: 'retrieval' },
  'openinference.span.kind=LLM?': {
    attrs: { 'openinference.span.kind': 'LLM', 'llm.prompts.0.prompt.text': 'Once' },
    kind: 'llm.completion',
  },
  'openinference.span.kind=LLM': { attrs: { 'openinference.span.kind': 'LLM' }, kind: 'llm.chat' },
  'openinference.span.kind=EMBEDDING': { attrs: { 'openinference.span.kind': 'EMBEDDING' }, kind: 'llm.embedding' },
  'openinference.span.kind=TOOL': { attrs: { 'openinference.span.kind': 'TOOL' }, kind: 'tool' },
  'openinference.span.kind=AGENT': { attrs: { 'openinference.span.kind': 'AGENT' }, kind: 'agent' },
  'openinference.span.kind=RETRIEVER': { attrs: { 'openinference.span.kind': 'RETRIEVER' }, kind: 'retrieval' },
  'openinference.span.kind=RERANKER': { attrs: { 'openinference.span.kind': 'RERANKER' }, kind: 'rerank' },
  'openinference.span.kind=GUARDRAIL': { attrs: { 'openinference.span.kind': 'guardrail' }, kind: 'guardrail' },
  'openinference.span.kind=CHAIN?': { attrs: { 'openinference.span.kind': 'CHAIN', 'graph.node.id': 'plan' }, kind: 'node' },
  'openinference.span.kind=CHAIN': { attrs: { 'openinference.span.kind': 'CHAIN' }, kind: 'chain' },
  // LangSmith's run type comes before the gen_ai.operation.name it derives (a retriever is not `embeddings`).
  'langsmith.span.kind=llm': { attrs: { 'langsmith.span.kind': 'llm', 'gen_ai.operation.name': 'chat' }, kind: 'llm.chat' },
  'langsmith.span.kind=embedding': { attrs: { 'langsmith.span.kind': 'embedding' }, kind: 'llm.embedding' },
  'langsmith.span.kind=retriever': {
    attrs: { 'langsmith.span.kind': 'retriever', 'gen_ai.operation.name': 'embeddings' },
    kind: 'retrieval',
  },
  'langsmith.span.kind=tool': { attrs: { 'langsmith.span.kind': 'tool', 'gen_ai.operation.name': 'execute_tool' }, kind: 'tool' },
  'langsmith.span.kind=chain': { attrs: { 'langsmith.span.kind': 'chain', 'gen_ai.operation.name': 'chain' }, kind: 'chain' },
  'langsmith.span.kind=prompt': { attrs: { 'langsmith.span.kind': 'prompt', 'gen_ai.operation.name': 'chat' }, kind: 'chain' },
  'langsmith.span.kind=parser': { attrs: { 'langsmith.span.kind': 'parser' }, kind: 'chain' },
  'ai.operationId=ai.generateText.doGenerate': { attrs: { 'ai.operationId': 'ai.generateText.doGenerate' }, kind: 'llm.chat' },
  'ai.operationId=ai.streamText.doStream': { attrs: { 'ai.operationId': 'ai.streamText.doStream' }, kind: 'llm.chat' },
  'ai.operationId=ai.generateObject.doGenerate': { attrs: { 'ai.operationId': 'ai.generateObject.doGenerate' }, kind: 'llm.chat' },
  'ai.operationId=ai.streamObject.doStream': { attrs: { 'ai.operationId': 'ai.streamObject.doStream' }, kind: 'llm.chat' },
  'ai.operationId=ai.embed.doEmbed': { attrs: { 'ai.operationId': 'ai.embed.doEmbed' }, kind: 'llm.embedding' },
  'ai.operationId=ai.embedMany.doEmbed': { attrs: { 'ai.operationId': 'ai.embedMany.doEmbed' }, kind: 'llm.embedding' },
  'ai.operationId=ai.rerank.doRerank': { attrs: { 'ai.operationId': 'ai.rerank.doRerank' }, kind: 'rerank' },
  'ai.operationId=ai.toolCall': { attrs: { 'ai.operationId': 'ai.toolCall' }, kind: 'tool' },
  'ai.operationId=ai.generateText': { attrs: { 'ai.operationId': 'ai.generateText' }, kind: 'chain' },
  'ai.operationId=ai.streamText': { attrs: { 'ai.operationId': 'ai.streamText' }, kind: 'chain' },
  'ai.operationId=ai.generateObject': { attrs: { 'ai.operationId': 'ai.generateObject' }, kind: 'chain' },
  'ai.operationId=ai.streamObject': { attrs: { 'ai.operationId': 'ai.streamObject' }, kind: 'chain' },
  'ai.operationId=ai.embed': { attrs: { 'ai.operationId': 'ai.embed' }, kind: 'chain' },
  'ai.operationId=ai.embedMany': { attrs: { 'ai.operationId': 'ai.embedMany' }, kind: 'chain' },
  'ai.operationId=ai.rerank': { attrs: { 'ai.operationId': 'ai.rerank' }, kind: 'chain' },
  // Langfuse's explicit observation type comes before OpenInference and GenAI.
  'langfuse.observation.type=generation': {
    attrs: { 'langfuse.observation.type': 'generation', 'openinference.span.kind': 'CHAIN' },
    kind: 'llm.chat',
  },
  'langfuse.observation.type=embedding': { attrs: { 'langfuse.observation.type': 'embedding' }, kind: 'llm.embedding' },
  'langfuse.observation.type=agent': { attrs: { 'langfuse.observation.type': 'agent' }, kind: 'agent' },
  'langfuse.observation.type=tool': { attrs: { 'langfuse.observation.type': 'tool' }, kind: 'tool' },
  'langfuse.observation.type=chain': { attrs: { 'langfuse.observation.type': 'chain' }, kind: 'chain' },
  'langfuse.observation.type=retriever': { attrs: { 'langfuse.observation.type': 'retriever' }, kind: 'retrieval' },
  'langfuse.observation.type=guardrail': { attrs: { 'langfuse.observation.type': 'guardrail' }, kind: 'guardrail' },
  'langfuse.observation.type=evaluator': {
    attrs: { 'langfuse.observation.type': 'evaluator', 'gen_ai.operation.name': 'chat' },
    kind: 'custom',
  },
  // OpenLLMetry comes after gen_ai.operation.name.
  'llm.request.type=chat': { attrs: { 'llm.request.type': 'chat', 'traceloop.span.kind': 'task' }, kind: 'llm.chat' },
  'llm.request.type=completion': { attrs: { 'llm.request.type': 'completion' }, kind: 'llm.completion' },
  'llm.request.type=embedding': { attrs: { 'llm.request.type': 'embedding' }, kind: 'llm.embedding' },
  'llm.request.type=rerank': { attrs: { 'llm.request.type': 'rerank' }, kind: 'rerank' },
  'traceloop.span.kind=workflow': { attrs: { 'traceloop.span.kind': 'workflow' }, kind: 'workflow' },
  'traceloop.span.kind=task': { attrs: { 'traceloop.span.kind': 'task' }, kind: 'chain' },
  'traceloop.span.kind=agent': { attrs: { 'traceloop.span.kind': 'agent' }, kind: 'agent' },
  'traceloop.span.kind=tool': { attrs: { 'traceloop.span.kind': 'tool', 'ai.operationId': 'ai.generateText' }, kind: 'tool' },
};
const kindRowName = (r: (typeof kindRows)[number]) => `${r.key}=${r.value}${r.when ? '?' : ''}`;

describe('kind rows', () => {
  it('has a case for every row', () => {
    expect(kindRows.map(kindRowName).sort()).toEqual(Object.keys(kindCases).sort());
  });
  it.each(Object.entries(kindCases))('%s', (_name, { attrs, kind }) => {
    expect(mapKind(attrs).kind).toBe(kind);
  });
  it('falls back to custom, and ignores a loupe.span.kind that is no kind', () => {
    expect(mapKind({ 'http.method': 'GET' }).kind).toBe('custom');
    expect(mapKind({ 'loupe.span.kind': 'banana', 'gen_ai.operation.name': 'chat' }).kind).toBe('llm.chat');
  });
  it('marks the ai SDK wrappers so their repeated model and usage stay attributes', () => {
    expect(mapKind({ 'ai.operationId': 'ai.generateText' }).noMetrics).toBe(true);
    expect(mapKind({ 'ai.operationId': 'ai.generateText.doGenerate' }).noMetrics).toBeUndefined();
  });
  it('consumes loupe.span.kind only (the others say more than the kind)', () => {
    expect(mapKind({ 'loupe.span.kind': 'graph' }).consumed).toEqual(['loupe.span.kind']);
    expect(mapKind({ 'gen_ai.operation.name': 'chat' }).consumed).toEqual([]);
  });
});

const fieldValues: Record<string, unknown> = {
  model: 'm-1',
  provider: 'p-1',
  inputTokens: 11,
  outputTokens: 22,
  totalTokens: 33,
  costUsd: 0.25,
  cacheReadTokens: 5,
  cacheWriteTokens: 6,
  reasoningTokens: 7,
  ttftMs: 120,
  promptName: 'support',
  promptVersion: '3',
};
const plainRows = fieldRows.filter((r) => !r.read);
const start = Date.parse('2026-01-01T00:00:00Z');

// Rows that convert their value: one case each (a test below checks none is missing).
const readCases: Record<string, { value: unknown; fields: Record<string, unknown> }> = {
  'langfuse.observation.usage_details': {
    value:
      '{"completion_tokens": 11, "prompt_tokens": 23, "total_tokens": 34, "completion_tokens_details": {"reasoning_tokens": 2}, "prompt_tokens_details": {"cached_tokens": 4}}',
    fields: { inputTokens: 23, outputTokens: 11, totalTokens: 34, cacheReadTokens: 4, reasoningTokens: 2 },
  },
  'langfuse.observation.cost_details': { value: '{"input": 0.5, "output": 0.25}', fields: { costUsd: 0.75 } },
  'langfuse.observation.model.name': { value: 'gpt-4o-mini-2024-07-18', fields: { model: 'gpt-4o-mini-2024-07-18', provider: 'openai' } },
  'langfuse.observation.completion_start_time': { value: '"2026-01-01T00:00:00.150250Z"', fields: { ttftMs: 150.25 } },
  'gen_ai.response.time_to_first_chunk': { value: 0.25, fields: { ttftMs: 250 } },
  'gen_ai.response.time_to_first_token': { value: '0.5', fields: { ttftMs: 500 } },
  'gen_ai.server.time_to_first_token': { value: 1, fields: { ttftMs: 1000 } },
  'llm.invocation_parameters': { value: '{"model": "bad-model", "temperature": 0}', fields: { model: 'bad-model' } },
  // The LangChain instrumentation's run metadata: the provider is read, the JSON stays an attribute.
  metadata: { value: '{"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"}', fields: { provider: 'openai' } },
  'gen_ai.usage.cost': { value: 0.25, fields: { costUsd: 0.25 } },
  'mastra.completion_start_time': { value: '2026-01-01T00:00:00.150Z', fields: { ttftMs: 150 } },
  'embedding.invocation_parameters': { value: '{"model": "text-embedding-3-small"}', fields: { model: 'text-embedding-3-small' } },
};

describe('metric rows', () => {
  it.each(plainRows.map((r) => [`${r.field} ← ${r.key}`, r] as const))('%s', (_name, row) => {
    const value = fieldValues[row.field];
    // Each row alone yields its field; numbers also arrive as text.
    const { fields, consumed } = mapMetrics({ [row.key]: typeof value === 'number' ? String(value) : value });
    expect((fields as Record<string, unknown>)[row.field]).toBe(value);
    expect(consumed).toEqual([row.key]);
    // A row above it for the same field wins, and the loser stays an attribute.
    const above = plainRows.slice(0, plainRows.indexOf(row)).find((r) => r.field === row.field);
    if (above) {
      const winner = typeof value === 'number' ? value + 1 : `${String(value)}-above`;
      const both = mapMetrics({ [row.key]: value, [above.key]: winner });
      expect((both.fields as Record<string, unknown>)[row.field]).toBe(winner);
      expect(both.consumed).not.toContain(row.key);
    }
  });
  it('has a case for every converting row', () => {
    expect(
      fieldRows
        .filter((r) => r.read)
        .map((r) => r.key)
        .sort(),
    ).toEqual(Object.keys(readCases).sort());
  });
  it.each(Object.entries(readCases))('%s', (key, { value, fields }) => {
    const mapped = mapMetrics({ [key]: value }, { startMs: start });
    expect(mapped.fields).toMatchObject(fields);
    expect(mapped.consumed).toEqual(fieldRows.find((r) => r.key === key)!.keep ? [] : [key]);
  });
  it("takes a Langfuse observation's provider from its model's family only when none is sent", () => {
    expect(mapMetrics({ 'langfuse.observation.model.name': 'claude-3-5-haiku' }).fields.provider).toBe('anthropic');
    expect(mapMetrics({ 'langfuse.observation.model.name': 'gpt-4o', 'gen_ai.system': 'azure.ai.openai' }).fields.provider).toBe('azure');
    expect(mapMetrics({ 'langfuse.observation.model.name': 'bad-model' }).fields).toEqual({ model: 'bad-model' });
  });
  it('reads Langfuse usage buckets as parts of the main counts', () => {
    const usage =
      '{"input": 10, "output": 5, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 20, "output_reasoning_tokens": 3}';
    expect(mapMetrics({ 'langfuse.observation.usage_details': usage }).fields).toEqual({
      inputTokens: 120,
      outputTokens: 8,
      totalTokens: 128,
      cacheReadTokens: 90,
      cacheWriteTokens: 20,
      reasoningTokens: 3,
    });
    expect(mapMetrics({ 'langfuse.observation.usage_details': '{"input": 7}' }).fields).toEqual({ inputTokens: 7, totalTokens: 7 });
  });
  it('takes the invocation parameters model only when no other row names one', () => {
    expect(mapMetrics({ 'llm.invocation_parameters': '{"model": "asked"}', 'llm.model_name': 'answered' }).fields.model).toBe('answered');
    expect(mapMetrics({ 'gen_ai.request.model': 'asked', 'ai.response.model': 'answered' }).fields.model).toBe('answered');
  });
  it('normalizes the provider', () => {
    expect(mapMetrics({ 'ai.model.provider': 'openai.chat' }).fields.provider).toBe('openai');
    expect(mapMetrics({ 'gen_ai.provider.name': 'az.ai.openai' }).fields.provider).toBe('azure');
  });
  it('derives total tokens when absent (input alone for embeddings), skips bad numbers', () => {
    expect(mapMetrics({ 'gen_ai.usage.input_tokens': 3, 'gen_ai.usage.output_tokens': 4 }).fields.totalTokens).toBe(7);
    expect(mapMetrics({ 'ai.usage.tokens': 9 }).fields).toEqual({ inputTokens: 9, totalTokens: 9 });
    expect(mapMetrics({ 'gen_ai.usage.input_tokens': 'many', 'llm.token_count.prompt': -1 }).fields.inputTokens).toBeUndefined();
  });
});

describe('trace field rows', () => {
  it.each(traceFieldRows.map((r) => [`${r.field} ← ${r.key}`, r] as const))('%s', (_name, row) => {
    const expected = (v: string) => (row.field === 'tags' ? [v] : v);
    if (row.from !== 'resource') expect(mapTraceFields({ [row.key]: 'v1' }, {})[row.field]).toEqual(expected('v1'));
    else expect(mapTraceFields({ [row.key]: 'v1' }, {})[row.field]).toBeUndefined();
    if (row.from !== 'span') expect(mapTraceFields({}, { [row.key]: 'v2' })[row.field]).toEqual(expected('v2'));
  });
  it('reads tags as a list or JSON text of one, and skips the SDK default service name', () => {
    expect(mapTraceFields({ 'langfuse.trace.tags': ['a', 'b', 'a'] }, {}).tags).toEqual(['a', 'b']);
    expect(mapTraceFields({ tags: '["x","y"]' }, {}).tags).toEqual(['x', 'y']);
    expect(mapTraceFields({}, { 'service.name': 'unknown_service:python' }).service).toBeUndefined();
    expect(mapTraceFields({}, { 'service.name': 'checkout' }).service).toBe('checkout');
  });
  it('prefers the span over the resource', () => {
    expect(mapTraceFields({ 'deployment.environment': 'a' }, { 'deployment.environment.name': 'b' }).environment).toBe('a');
  });
});

const ioCases: Record<string, { attrs: Record<string, unknown>; input?: unknown; output?: unknown }> = {
  'gen_ai.system_instructions': {
    attrs: { 'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'Be brief.' }]) },
    input: { messages: [{ role: 'system', content: 'Be brief.' }] },
  },
  'gen_ai.input.messages': {
    attrs: {
      'gen_ai.input.messages': [
        { role: 'user', parts: [{ type: 'text', content: 'Weather?' }] },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', result: { temp: 3 } }] },
      ],
    },
    input: {
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }] },
        { role: 'tool', content: '{"temp":3}', toolCallId: 'c1' },
      ],
    },
  },
  'gen_ai.output.messages': {
    attrs: {
      'gen_ai.output.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [
            { type: 'reasoning', content: 'hmm' },
            { type: 'text', content: 'Cold.' },
          ],
          finish_reason: 'stop',
        },
      ]),
    },
    output: {
      messages: [{ role: 'assistant', content: 'Cold.' }],
      raw: {
        'gen_ai.output.messages': [
          { message: 0, finish_reason: 'stop' },
          { message: 0, part: { type: 'reasoning', content: 'hmm' } },
        ],
      },
    },
  },
  'gen_ai.tool': {
    attrs: {
      'gen_ai.tool.name': 'weather',
      'gen_ai.tool.call.id': 'c2',
      'gen_ai.tool.call.arguments': '{"city":"Rome"}',
      'gen_ai.tool.call.result': '{"temp":20}',
    },
    input: { toolCalls: [{ id: 'c2', name: 'weather', arguments: { city: 'Rome' } }] },
    output: { toolCalls: [{ id: 'c2', name: 'weather', arguments: { city: 'Rome' }, result: { temp: 20 } }] },
  },
  'ai.toolCall': {
    attrs: { 'ai.toolCall.name': 'add', 'ai.toolCall.id': 't1', 'ai.toolCall.args': '{"a":1}', 'ai.toolCall.result': '2' },
    input: { toolCalls: [{ id: 't1', name: 'add', arguments: { a: 1 } }] },
    output: { toolCalls: [{ id: 't1', name: 'add', arguments: { a: 1 }, result: '2' }] },
  },
  'tool.name': {
    attrs: { 'tool.name': 'search', 'input.value': '{"q":"otel"}', 'output.value': 'found' },
    input: { toolCalls: [{ id: '', name: 'search', arguments: { q: 'otel' } }] },
    output: { toolCalls: [{ id: '', name: 'search', arguments: { q: 'otel' }, result: 'found' }] },
  },
  'llm.input_messages': {
    attrs: {
      'llm.input_messages.0.message.role': 'system',
      'llm.input_messages.0.message.content': 'Sys',
      'llm.input_messages.1.message.role': 'user',
      'llm.input_messages.1.message.contents.0.message_content.type': 'text',
      'llm.input_messages.1.message.contents.0.message_content.text': 'Hi',
    },
    input: {
      messages: [
        { role: 'system', content: 'Sys' },
        { role: 'user', content: 'Hi' },
      ],
    },
  },
  'llm.output_messages': {
    attrs: {
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'x1',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'lookup',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"id":7}',
    },
    output: { messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'x1', name: 'lookup', arguments: { id: 7 } }] }] },
  },
  'retrieval.documents': {
    attrs: {
      'retrieval.documents.0.document.content': 'Doc A',
      'retrieval.documents.0.document.score': 0.9,
      'retrieval.documents.0.document.id': 'a',
    },
    output: { documents: [{ content: 'Doc A', score: 0.9, metadata: { id: 'a' } }] },
  },
  'reranker.input_documents': {
    attrs: { 'reranker.input_documents.0.document.content': 'In', 'reranker.input_documents.0.document.metadata': '{"src":"x"}' },
    input: { documents: [{ content: 'In', metadata: { src: 'x' } }] },
  },
  'reranker.output_documents': {
    attrs: { 'reranker.output_documents.0.document.content': 'Out' },
    output: { documents: [{ content: 'Out' }] },
  },
  'reranker.query': { attrs: { 'reranker.query': 'what' }, input: { text: 'what' } },
  'ai.prompt.messages': {
    attrs: {
      'ai.prompt.messages': JSON.stringify([
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'text', text: 'Q' }] },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'k', toolName: 'f', input: { x: 1 } }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'k', toolName: 'f', output: { type: 'json', value: { y: 2 } } }] },
      ]),
    },
    input: {
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'Q' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'k', name: 'f', arguments: { x: 1 } }] },
        { role: 'tool', content: '{"y":2}', toolCallId: 'k' },
      ],
    },
  },
  'ai.prompt': {
    attrs: { 'ai.prompt': '{"system":"S","prompt":"P"}' },
    input: {
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'P' },
      ],
    },
  },
  'ai.response': {
    attrs: { 'ai.response.text': 'A', 'ai.response.toolCalls': '[{"toolCallId":"q","toolName":"g","input":"{\\"z\\":3}"}]' },
    output: { messages: [{ role: 'assistant', content: 'A', toolCalls: [{ id: 'q', name: 'g', arguments: { z: 3 } }] }] },
  },
  'ai.values': { attrs: { 'ai.values': ['one', 'two'] }, input: { documents: [{ content: 'one' }, { content: 'two' }] } },
  'embedding.embeddings': {
    attrs: { 'embedding.embeddings.0.embedding.text': 'Loupe traces embeddings' },
    input: { text: 'Loupe traces embeddings' },
  },
  'gen_ai.prompt': {
    attrs: {
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': 'Weather in Paris?',
      'gen_ai.prompt.1.role': 'assistant',
      'gen_ai.prompt.1.tool_calls.0.id': 'call_1',
      'gen_ai.prompt.1.tool_calls.0.name': 'get_weather',
      'gen_ai.prompt.1.tool_calls.0.arguments': '{"city": "Paris"}',
      'gen_ai.prompt.2.role': 'tool',
      'gen_ai.prompt.2.content': '{"temperature": 18}',
      'gen_ai.prompt.2.tool_call_id': 'call_1',
    },
    input: {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
        { role: 'tool', content: '{"temperature": 18}', toolCallId: 'call_1' },
      ],
    },
  },
  'gen_ai.completion': {
    attrs: {
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Sunny.',
      'gen_ai.completion.0.finish_reason': 'stop',
    },
    output: { messages: [{ role: 'assistant', content: 'Sunny.' }], raw: { 'gen_ai.completion': [{ message: 0, finish_reason: 'stop' }] } },
  },
  'traceloop.entity': {
    attrs: { 'traceloop.entity.input': '{"args": [], "kwargs": {"q": 1}}', 'traceloop.entity.output': '"done"' },
    input: { text: '{"args": [], "kwargs": {"q": 1}}' },
    output: { text: 'done' },
  },
  'langfuse.observation.input': {
    attrs: { 'langfuse.observation.input': '{"tools": [{"type": "function"}], "messages": [{"role": "user", "content": "Hi"}]}' },
    input: { messages: [{ role: 'user', content: 'Hi' }], raw: { tools: [{ type: 'function' }] } },
  },
  'langfuse.observation.output': {
    attrs: {
      'langfuse.observation.output':
        '{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]}',
    },
    output: { messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: { a: 1 } }] }] },
  },
  // LangSmith: the whole run inputs and outputs (here its wrapped OpenAI client's request and response).
  'gen_ai.prompt (LangSmith)': {
    attrs: {
      'gen_ai.prompt': JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'Hi' },
        ],
      }),
    },
    input: {
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'Hi' },
      ],
      raw: { model: 'gpt-4o-mini' },
    },
  },
  'gen_ai.completion (LangSmith)': {
    attrs: {
      'gen_ai.completion': JSON.stringify({
        id: 'chatcmpl-1',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      }),
    },
    output: {
      messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: { a: 1 } }] }],
      raw: { id: 'chatcmpl-1' },
    },
  },
  'input.value': { attrs: { 'input.value': 'hello', 'input.mime_type': 'text/plain' }, input: { text: 'hello' } },
  'output.value': { attrs: { 'output.value': '{"a":1}', 'output.mime_type': 'application/json' }, output: { text: '{"a":1}' } },
};

describe('input and output rows', () => {
  it('has a case for every row', () => {
    expect(ioRows.map((r) => r.id).sort()).toEqual(Object.keys(ioCases).sort());
  });
  it.each(Object.entries(ioCases))('%s', (_name, { attrs, input, output }) => {
    const mapped = mapIO(attrs);
    expect(mapped.input).toEqual(input);
    expect(mapped.output).toEqual(output);
    // Every attribute the row read became a native field.
    expect(mapped.consumed.sort()).toEqual(Object.keys(attrs).sort());
  });
  it("reads LangSmith's run JSON only for a side no other convention gave messages, as a duplicate otherwise", () => {
    const attrs = {
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Hi' }] }]),
      'gen_ai.prompt': JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] }),
      'gen_ai.completion': '{"choices": [{"message": {"role": "assistant", "content": "Hello"}}]}',
    };
    const mapped = mapIO(attrs);
    expect(mapped.input).toEqual({ messages: [{ role: 'user', content: 'Hi' }] });
    expect(mapped.output).toEqual({ messages: [{ role: 'assistant', content: 'Hello' }] });
    expect(mapped.duplicates).toEqual(['gen_ai.prompt']);
    expect(mapped.consumed.sort()).toEqual(Object.keys(attrs).sort());
    // A prompt that is not JSON is never parsed there either: it is the same duplicate.
    expect(mapIO({ ...attrs, 'gen_ai.prompt': '{not json' }).duplicates).toEqual(['gen_ai.prompt']);
  });
  it('keeps blob, file and uri parts under raw, and guesses unknown roles without losing them', () => {
    const messages = [
      {
        role: 'developer',
        parts: [
          { type: 'blob', modality: 'image', mime_type: 'image/png', content: 'AAAA' },
          { type: 'uri', modality: 'image', uri: 'https://x/y.png' },
          { type: 'file', file_id: 'f1' },
        ],
      },
    ];
    const mapped = mapIO({ 'gen_ai.input.messages': messages });
    expect(mapped.input?.messages).toEqual([{ role: 'system', content: '' }]);
    expect(mapped.input?.raw).toEqual({
      'gen_ai.input.messages': [{ message: 0, role: 'developer' }, ...messages[0]!.parts.map((part) => ({ message: 0, part }))],
    });
  });
  it('keeps OpenInference raw input.value only when nothing better was mapped (else it is a recorded duplicate)', () => {
    const mapped = mapIO({
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': 'Hi',
      'input.value': '{"messages":[]}',
    });
    expect(mapped.input).toEqual({ messages: [{ role: 'user', content: 'Hi' }] });
    expect(mapped.duplicates).toEqual(['input.value']);
    expect(mapped.consumed).toContain('input.value');
  });
  it('maps a traceloop tool span as its call', () => {
    const mapped = mapIO({
      'traceloop.span.kind': 'tool',
      'traceloop.entity.name': 'get_weather',
      'traceloop.entity.input': '{"args": [], "kwargs": {"city": "Paris"}}',
      'traceloop.entity.output': '"{\\"sky\\": \\"sunny\\"}"',
    });
    expect(mapped.input).toEqual({ toolCalls: [{ id: '', name: 'get_weather', arguments: { city: 'Paris' } }] });
    expect(mapped.output).toEqual({ toolCalls: [{ id: '', name: 'get_weather', arguments: { city: 'Paris' }, result: { sky: 'sunny' } }] });
  });
  it('maps a Langfuse generation whose output is plain text as the assistant message', () => {
    const mapped = mapIO({ 'langfuse.observation.type': 'generation', 'langfuse.observation.output': 'Fake answer' });
    expect(mapped.output).toEqual({ messages: [{ role: 'assistant', content: 'Fake answer' }] });
    expect(mapIO({ 'langfuse.observation.type': 'tool', 'langfuse.observation.output': '{"a": 1}' }).output).toEqual({ text: '{"a":1}' });
  });
  it('merges gen_ai system instructions before the input messages', () => {
    const mapped = mapIO({
      'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'U' }] }],
      'gen_ai.system_instructions': [{ type: 'text', content: 'S' }],
    });
    expect(mapped.input?.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
    ]);
  });
});

describe('the API reference (docs/api.md) lists every rule', () => {
  const reference = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const otlp = reference.slice(reference.indexOf('## OpenTelemetry (OTLP)'), reference.indexOf('## Send traces from your app'));
  it.each(
    [
      ...kindRows.map((r) => r.key),
      ...kindRows.filter((r) => r.value !== '*').map((r) => r.value),
      ...fieldRows.map((r) => r.key),
      ...traceFieldRows.map((r) => r.key),
      ...ioRows.flatMap((r) => r.keys.map((k) => k.replace(/\.$/, ''))),
    ].filter((v, i, all) => all.indexOf(v) === i),
  )('%s', (key) => {
    expect(otlp).toContain(key);
  });
});
