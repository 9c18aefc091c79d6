import { convertGenAiMessages, convertSystemInstructions } from '../values/io-genai.js';
import { asNumber } from '../values/io-values.js';
import {
  messagesRow,
  readPricedCost,
  toolCallRow,
  type ErrorEventRow,
  type FieldRow,
  type IORow,
  type KindRow,
  type TraceFieldRow,
} from './table.js';

/**
 * OpenTelemetry GenAI semantic conventions, current (v1.37+): `gen_ai.operation.name`, the
 * usage counts (cache reads and writes and reasoning included in the input and output counts,
 * OpenTelemetry's rule), structured messages, tool execution spans, and the trace fields of
 * the general conventions (session, user, environment, service).
 */

const seconds = (value: unknown) => {
  const n = asNumber(value);
  return n === undefined || n < 0 ? undefined : { ttftMs: n * 1000 };
};

export const genAi = {
  kinds: [
    { key: 'gen_ai.operation.name', value: 'chat', kind: 'llm.chat' },
    { key: 'gen_ai.operation.name', value: 'generate_content', kind: 'llm.chat' },
    { key: 'gen_ai.operation.name', value: 'text_completion', kind: 'llm.completion' },
    { key: 'gen_ai.operation.name', value: 'embeddings', kind: 'llm.embedding' },
    { key: 'gen_ai.operation.name', value: 'execute_tool', kind: 'tool' },
    { key: 'gen_ai.operation.name', value: 'invoke_agent', kind: 'agent' },
    { key: 'gen_ai.operation.name', value: 'create_agent', kind: 'agent' },
    { key: 'gen_ai.operation.name', value: 'retrieval', kind: 'retrieval' },
  ] satisfies KindRow[],
  fields: [
    { field: 'model', key: 'gen_ai.response.model' },
    { field: 'provider', key: 'gen_ai.provider.name' },
    { field: 'provider', key: 'gen_ai.system' },
    { field: 'inputTokens', key: 'gen_ai.usage.input_tokens' },
    { field: 'outputTokens', key: 'gen_ai.usage.output_tokens' },
    { field: 'totalTokens', key: 'gen_ai.usage.total_tokens' },
    { field: 'cacheReadTokens', key: 'gen_ai.usage.cache_read.input_tokens' },
    { field: 'cacheWriteTokens', key: 'gen_ai.usage.cache_creation.input_tokens' },
    // The Anthropic SDK's own spans (and OpenLIT) name the cache writes this way.
    { field: 'cacheWriteTokens', key: 'gen_ai.usage.cache_write.input_tokens' },
    { field: 'reasoningTokens', key: 'gen_ai.usage.reasoning.output_tokens' },
    { field: 'reasoningTokens', key: 'gen_ai.usage.reasoning_tokens' },
    { field: 'costUsd', key: 'gen_ai.usage.cost', read: readPricedCost },
    { field: 'ttftMs', key: 'gen_ai.response.time_to_first_chunk', read: seconds },
    { field: 'ttftMs', key: 'gen_ai.response.time_to_first_token', read: seconds },
    { field: 'ttftMs', key: 'gen_ai.server.time_to_first_token', read: seconds },
    { field: 'promptName', key: 'gen_ai.prompt.name' },
    { field: 'promptVersion', key: 'gen_ai.prompt.version' },
  ] satisfies FieldRow[],
  /** Below every other convention's rows: the requested model names the call only when no answer did. */
  fallbackFields: [{ field: 'model', key: 'gen_ai.request.model' }] satisfies FieldRow[],
  traceFields: [
    { field: 'environment', key: 'deployment.environment.name' },
    { field: 'environment', key: 'deployment.environment' },
    { field: 'sessionId', key: 'session.id' },
    { field: 'sessionId', key: 'gen_ai.conversation.id' },
    { field: 'userId', key: 'user.id' },
    { field: 'userId', key: 'enduser.id' },
    { field: 'service', key: 'service.name', from: 'resource' },
    { field: 'tags', key: 'tags' },
  ] satisfies TraceFieldRow[],
  io: [
    messagesRow('gen_ai.system_instructions', 'input', convertSystemInstructions),
    messagesRow('gen_ai.input.messages', 'input', convertGenAiMessages),
    messagesRow('gen_ai.output.messages', 'output', convertGenAiMessages),
    toolCallRow('gen_ai.tool', {
      name: 'gen_ai.tool.name',
      id: 'gen_ai.tool.call.id',
      args: 'gen_ai.tool.call.arguments',
      result: 'gen_ai.tool.call.result',
    }),
  ] satisfies IORow[],
  /**
   * OpenTelemetry's exception event (`span.recordException`): a span that recorded one and left
   * its status unset failed (libraries that record the exception but never set the status);
   * the event's `exception.message` is its message. An explicit OK status stays OK.
   */
  errorEvents: [{ name: 'exception', messageKey: 'exception.message' }] satisfies ErrorEventRow[],
};
