import type { SpanDocument, SpanMessage, SpanToolCall } from '../wire/model.js';
import { asArguments, asNumber, asString, collectIndexed, isRecord, parseMaybeJson, toRole } from './io-values.js';
import { emptyConversion } from './io-genai.js';

/**
 * OpenInference flattened lists: `llm.input_messages.N.message.role|content|name|tool_call_id`,
 * `...message.contents.M.message_content.type|text`, `...message.tool_calls.M.tool_call.id|
 * function.name|function.arguments`, and `retrieval.documents.N.document.content|id|score|
 * metadata`. Each converter reports the attribute keys it read.
 */
export function convertOpenInferenceMessages(attrs: Record<string, unknown>, prefix: string) {
  const { items, keys } = collectIndexed(attrs, `${prefix}.`);
  const out = emptyConversion();
  for (const [index, item] of items.entries()) {
    const { role, exact } = toRole(item['message.role']);
    if (!exact) out.extras.push({ message: index, role: item['message.role'] });
    const text: string[] = [];
    if (item['message.content'] !== undefined) text.push(asString(item['message.content']) ?? JSON.stringify(item['message.content']));
    for (const part of collectIndexed(item, 'message.contents.').items) {
      const type = part['message_content.type'];
      if (type === undefined || type === 'text') text.push(asString(part['message_content.text']) ?? '');
      else out.extras.push({ message: index, content: part }); // images and other content kinds
    }
    const calls: SpanToolCall[] = collectIndexed(item, 'message.tool_calls.').items.map((call) => ({
      id: asString(call['tool_call.id']) ?? '',
      name: asString(call['tool_call.function.name']) ?? '',
      arguments: asArguments(call['tool_call.function.arguments']),
    }));
    const message: SpanMessage = { role, content: text.join('\n'), ...(calls.length > 0 ? { toolCalls: calls } : {}) };
    const name = asString(item['message.name']);
    const toolCallId = asString(item['message.tool_call_id']);
    if (name) message.name = name;
    if (toolCallId) message.toolCallId = toolCallId;
    out.messages.push(message);
  }
  return { converted: out, keys };
}

export function convertOpenInferenceDocuments(attrs: Record<string, unknown>, prefix: string) {
  const { items, keys } = collectIndexed(attrs, `${prefix}.`);
  const documents: SpanDocument[] = items.map((item) => {
    const document: SpanDocument = { content: asString(item['document.content']) ?? '' };
    const parsed = parseMaybeJson(item['document.metadata']);
    const metadata: Record<string, unknown> = isRecord(parsed) ? { ...parsed } : parsed !== undefined ? { value: parsed } : {};
    if (item['document.id'] !== undefined) metadata.id = item['document.id'];
    if (Object.keys(metadata).length > 0) document.metadata = metadata;
    const score = asNumber(item['document.score']);
    if (score !== undefined) document.score = score;
    return document;
  });
  return { documents, keys };
}
