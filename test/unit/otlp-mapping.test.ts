import { describe, expect, it } from 'vitest';
import { fieldRows, ioRows, kindRows, mapIO, mapKind, mapMetrics, mapTraceFields, traceFieldRows } from '../../src/traces/otlp/mapping.js';

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
  'gen_ai.operation.name=retrieval': { attrs: { 'gen_ai.operation.name': 'retrieval', 'openinference.span.kind': 'CHAIN' }, kind: 'retrieval' },
  'openinference.span.kind=LLM?': { attrs: { 'openinference.span.kind': 'LLM', 'llm.prompts.0.prompt.text': 'Once' }, kind: 'llm.completion' },
  'openinference.span.kind=LLM': { attrs: { 'openinference.span.kind': 'LLM' }, kind: 'llm.chat' },
  'openinference.span.kind=EMBEDDING': { attrs: { 'openinference.span.kind': 'EMBEDDING' }, kind: 'llm.embedding' },
  'openinference.span.kind=TOOL': { attrs: { 'openinference.span.kind': 'TOOL' }, kind: 'tool' },
  'openinference.span.kind=AGENT': { attrs: { 'openinference.span.kind': 'AGENT' }, kind: 'agent' },
  'openinference.span.kind=RETRIEVER': { attrs: { 'openinference.span.kind': 'RETRIEVER' }, kind: 'retrieval' },
  'openinference.span.kind=RERANKER': { attrs: { 'openinference.span.kind': 'RERANKER' }, kind: 'rerank' },
  'openinference.span.kind=GUARDRAIL': { attrs: { 'openinference.span.kind': 'guardrail' }, kind: 'guardrail' },
  'openinference.span.kind=CHAIN?': { attrs: { 'openinference.span.kind': 'CHAIN', 'graph.node.id': 'plan' }, kind: 'node' },
  'openinference.span.kind=CHAIN': { attrs: { 'openinference.span.kind': 'CHAIN' }, kind: 'chain' },
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
  it('consumes loupe.span.kind only (the others say more than the kind)', () => {
    expect(mapKind({ 'loupe.span.kind': 'graph' }).consumed).toEqual(['loupe.span.kind']);
    expect(mapKind({ 'gen_ai.operation.name': 'chat' }).consumed).toEqual([]);
  });
});

const fieldValues: Record<string, unknown> = { model: 'm-1', provider: 'p-1', inputTokens: 11, outputTokens: 22, totalTokens: 33, costUsd: 0.25 };

describe('metric rows', () => {
  it.each(fieldRows.map((r) => [`${r.field} ← ${r.key}`, r] as const))('%s', (_name, row) => {
    const value = fieldValues[row.field];
    // Each row alone yields its field; numbers also arrive as text.
    const { fields, consumed } = mapMetrics({ [row.key]: typeof value === 'number' ? String(value) : value });
    expect(fields[row.field]).toBe(value);
    expect(consumed).toEqual([row.key]);
    // A row above it for the same field wins, and the loser stays an attribute.
    const above = fieldRows.slice(0, fieldRows.indexOf(row)).find((r) => r.field === row.field);
    if (above) {
      const winner = typeof value === 'number' ? value + 1 : `${String(value)}-above`;
      const both = mapMetrics({ [row.key]: value, [above.key]: winner });
      expect(both.fields[row.field]).toBe(winner);
      expect(both.consumed).not.toContain(row.key);
    }
  });
  it('sums total tokens when only input and output are given, skips bad numbers', () => {
    expect(mapMetrics({ 'gen_ai.usage.input_tokens': 3, 'gen_ai.usage.output_tokens': 4 }).fields.totalTokens).toBe(7);
    expect(mapMetrics({ 'gen_ai.usage.input_tokens': 'many', 'llm.token_count.prompt': -1 }).fields.inputTokens).toBeUndefined();
  });
});

describe('trace field rows', () => {
  it.each(traceFieldRows.map((r) => [`${r.field} ← ${r.key}`, r] as const))('%s', (_name, row) => {
    expect(mapTraceFields({ [row.key]: 'v1' }, {})[row.field]).toBe('v1');
    expect(mapTraceFields({}, { [row.key]: 'v2' })[row.field]).toBe('v2');
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
        { role: 'tool', content: '{"temp":3}', toolCallId: 'c1' },
      ],
      toolCalls: [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' }, result: { temp: 3 } }],
    },
  },
  'gen_ai.output.messages': {
    attrs: {
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'reasoning', content: 'hmm' }, { type: 'text', content: 'Cold.' }], finish_reason: 'stop' },
      ]),
    },
    output: {
      messages: [{ role: 'assistant', content: 'Cold.' }],
      raw: { 'gen_ai.output.messages': [{ message: 0, finish_reason: 'stop' }, { message: 0, part: { type: 'reasoning', content: 'hmm' } }] },
    },
  },
  'gen_ai.tool': {
    attrs: { 'gen_ai.tool.name': 'weather', 'gen_ai.tool.call.id': 'c2', 'gen_ai.tool.call.arguments': '{"city":"Rome"}', 'gen_ai.tool.call.result': '{"temp":20}' },
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
    input: { messages: [{ role: 'system', content: 'Sys' }, { role: 'user', content: 'Hi' }] },
  },
  'llm.output_messages': {
    attrs: {
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'x1',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'lookup',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"id":7}',
    },
    output: { toolCalls: [{ id: 'x1', name: 'lookup', arguments: { id: 7 } }] },
  },
  'retrieval.documents': {
    attrs: { 'retrieval.documents.0.document.content': 'Doc A', 'retrieval.documents.0.document.score': 0.9, 'retrieval.documents.0.document.id': 'a' },
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
        { role: 'tool', content: '{"y":2}', toolCallId: 'k' },
      ],
      toolCalls: [{ id: 'k', name: 'f', arguments: { x: 1 }, result: { y: 2 } }],
    },
  },
  'ai.prompt': { attrs: { 'ai.prompt': '{"system":"S","prompt":"P"}' }, input: { messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'P' }] } },
  'ai.response.text': { attrs: { 'ai.response.text': 'A' }, output: { messages: [{ role: 'assistant', content: 'A' }] } },
  'ai.response.toolCalls': {
    attrs: { 'ai.response.toolCalls': '[{"toolCallId":"q","toolName":"g","input":"{\\"z\\":3}"}]' },
    output: { toolCalls: [{ id: 'q', name: 'g', arguments: { z: 3 } }] },
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
  it('keeps blob, file and uri parts under raw, and guesses unknown roles without losing them', () => {
    const messages = [{ role: 'developer', parts: [{ type: 'blob', modality: 'image', mime_type: 'image/png', content: 'AAAA' }, { type: 'uri', modality: 'image', uri: 'https://x/y.png' }, { type: 'file', file_id: 'f1' }] }];
    const mapped = mapIO({ 'gen_ai.input.messages': messages });
    expect(mapped.input?.messages).toEqual([{ role: 'system', content: '' }]);
    expect(mapped.input?.raw).toEqual({
      'gen_ai.input.messages': [{ message: 0, role: 'developer' }, ...messages[0]!.parts.map((part) => ({ message: 0, part }))],
    });
  });
  it('merges gen_ai system instructions before the input messages', () => {
    const mapped = mapIO({ 'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'U' }] }], 'gen_ai.system_instructions': [{ type: 'text', content: 'S' }] });
    expect(mapped.input?.messages).toEqual([{ role: 'system', content: 'S' }, { role: 'user', content: 'U' }]);
  });
});
