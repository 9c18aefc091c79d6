import { convertAiSdkMessages, convertAiSdkToolCalls } from '../values/io-genai.js';
import { asString, parseMaybeJson } from '../values/io-values.js';
import type { SpanMessage } from '../wire/model.js';
import { messagesRow, toolCallRow, type FieldRow, type IORow, type KindRow, type TraceFieldRow } from './table.js';

/**
 * The Vercel AI SDK's telemetry (`ai.*`): spans named by `ai.operationId`. The provider call
 * (`doGenerate`, `doStream`, `doEmbed`) is the generation span; the wrapping call
 * (`ai.generateText`) repeats its children's model and usage, so it is a chain whose figures
 * stay attributes (`noMetrics`) and never form a model group of their own.
 */

const wrapper = (operation: string): KindRow => ({ key: 'ai.operationId', value: operation, kind: 'chain', noMetrics: true });

/** The answer: its text and tool calls as one assistant message, in the order the model gave them. */
const responseRow: IORow = {
  id: 'ai.response',
  keys: ['ai.response.text', 'ai.response.toolCalls'],
  read(attrs) {
    const text = attrs['ai.response.text'];
    const calls = attrs['ai.response.toolCalls'] !== undefined ? convertAiSdkToolCalls(attrs['ai.response.toolCalls']) : [];
    const message: SpanMessage = { role: 'assistant', content: asString(text) ?? '' };
    if (calls.length > 0) message.toolCalls = calls;
    return {
      output: { messages: [message] },
      consumed: ['ai.response.text', 'ai.response.toolCalls'].filter((k) => attrs[k] !== undefined),
    };
  },
};

/** What an embedding call embedded: `ai.value` (one) or `ai.values` (many). */
const embedInputRow: IORow = {
  id: 'ai.values',
  keys: ['ai.value', 'ai.values'],
  read(attrs) {
    const consumed = ['ai.value', 'ai.values'].filter((k) => attrs[k] !== undefined);
    const text = (v: unknown) =>
      typeof v === 'string'
        ? (() => {
            const p = parseMaybeJson(v);
            return typeof p === 'string' ? p : v;
          })()
        : JSON.stringify(v);
    if (attrs['ai.value'] !== undefined) return { input: { text: text(attrs['ai.value']) }, consumed };
    const values = Array.isArray(attrs['ai.values']) ? (attrs['ai.values'] as unknown[]) : [attrs['ai.values']];
    return { input: { documents: values.map((v) => ({ content: text(v) })) }, consumed };
  },
};

export const aiSdk = {
  kinds: [
    { key: 'ai.operationId', value: 'ai.generateText.doGenerate', kind: 'llm.chat' },
    { key: 'ai.operationId', value: 'ai.streamText.doStream', kind: 'llm.chat' },
    { key: 'ai.operationId', value: 'ai.generateObject.doGenerate', kind: 'llm.chat' },
    { key: 'ai.operationId', value: 'ai.streamObject.doStream', kind: 'llm.chat' },
    { key: 'ai.operationId', value: 'ai.embed.doEmbed', kind: 'llm.embedding' },
    { key: 'ai.operationId', value: 'ai.embedMany.doEmbed', kind: 'llm.embedding' },
    { key: 'ai.operationId', value: 'ai.rerank.doRerank', kind: 'rerank' },
    { key: 'ai.operationId', value: 'ai.toolCall', kind: 'tool' },
    wrapper('ai.generateText'),
    wrapper('ai.streamText'),
    wrapper('ai.generateObject'),
    wrapper('ai.streamObject'),
    wrapper('ai.embed'),
    wrapper('ai.embedMany'),
    wrapper('ai.rerank'),
  ] satisfies KindRow[],
  fields: [
    { field: 'model', key: 'ai.response.model' },
    { field: 'provider', key: 'ai.model.provider' },
    { field: 'inputTokens', key: 'ai.usage.inputTokens' },
    { field: 'inputTokens', key: 'ai.usage.promptTokens' },
    { field: 'inputTokens', key: 'ai.usage.tokens' },
    { field: 'outputTokens', key: 'ai.usage.outputTokens' },
    { field: 'outputTokens', key: 'ai.usage.completionTokens' },
    { field: 'totalTokens', key: 'ai.usage.totalTokens' },
    { field: 'cacheReadTokens', key: 'ai.usage.cachedInputTokens' },
    { field: 'reasoningTokens', key: 'ai.usage.reasoningTokens' },
    { field: 'ttftMs', key: 'ai.response.msToFirstChunk' },
    { field: 'ttftMs', key: 'ai.stream.msToFirstChunk' },
  ] satisfies FieldRow[],
  fallbackFields: [{ field: 'model', key: 'ai.model.id' }] satisfies FieldRow[],
  traceFields: [
    { field: 'sessionId', key: 'ai.telemetry.metadata.sessionId' },
    { field: 'userId', key: 'ai.telemetry.metadata.userId' },
    { field: 'tags', key: 'ai.telemetry.metadata.tags' },
  ] satisfies TraceFieldRow[],
  io: [
    toolCallRow('ai.toolCall', { name: 'ai.toolCall.name', id: 'ai.toolCall.id', args: 'ai.toolCall.args', result: 'ai.toolCall.result' }),
    messagesRow('ai.prompt.messages', 'input', convertAiSdkMessages),
    messagesRow('ai.prompt', 'input', convertAiSdkMessages),
    responseRow,
    embedInputRow,
  ] satisfies IORow[],
};
