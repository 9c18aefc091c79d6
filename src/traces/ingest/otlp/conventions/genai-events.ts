import { convertAiSdkToolCalls, convertGenAiMessages, emptyConversion, type ConvertedMessages } from '../values/io-genai.js';
import { asString, asText, isRecord, parseMaybeJson } from '../values/io-values.js';
import type { SpanMessage } from '../wire/model.js';

/**
 * GenAI content sent as events: the OpenTelemetry GenAI event conventions before v1.37
 * (`gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
 * `gen_ai.tool.message`, `gen_ai.choice`), as OTLP log records (the default of the official
 * OpenAI instrumentation) or as span events; and the v1.37 `gen_ai.client.inference.operation.details`
 * event carrying `gen_ai.input.messages` / `gen_ai.output.messages`. A log record's body holds
 * the content; a span event's attributes do (`gen_ai.event.content` as JSON in some versions).
 *
 * Also the first-token events, for time to first token.
 */

export interface EventRow {
  name: string;
  side: 'input' | 'output';
  role: SpanMessage['role'];
}

export const eventMessageRows: EventRow[] = [
  { name: 'gen_ai.system.message', side: 'input', role: 'system' },
  { name: 'gen_ai.user.message', side: 'input', role: 'user' },
  { name: 'gen_ai.assistant.message', side: 'input', role: 'assistant' },
  { name: 'gen_ai.tool.message', side: 'input', role: 'tool' },
  { name: 'gen_ai.choice', side: 'output', role: 'assistant' },
];

const rowsByName = new Map(eventMessageRows.map((r) => [r.name, r]));

export const isGenAiContentEvent = (name: string) => rowsByName.has(name) || name === 'gen_ai.client.inference.operation.details';

/** One message from an event body: {content, tool_calls?, id?} or, for a choice, {message: {...}, finish_reason, index}. */
function eventMessage(row: EventRow, body: Record<string, unknown>, out: ConvertedMessages) {
  const source = row.name === 'gen_ai.choice' && isRecord(body.message) ? body.message : body;
  const role = row.role;
  const calls = source.tool_calls !== undefined ? convertAiSdkToolCalls(source.tool_calls) : [];
  const message: SpanMessage = { role, content: asText(source.content) };
  const toolCallId = asString(role === 'tool' ? (source.id ?? source.tool_call_id) : undefined);
  if (toolCallId) message.toolCallId = toolCallId;
  if (calls.length > 0) message.toolCalls = calls;
  out.messages.push(message);
  const index = out.messages.length - 1;
  if (body.finish_reason !== undefined) out.extras.push({ message: index, finish_reason: body.finish_reason });
}

export interface ContentEvent {
  name: string;
  /** A log record's body, or a span event's attributes. */
  body: unknown;
}

/** Both sides of a span's conversation from its content events, in the order given. */
export function messagesFromEvents(events: ContentEvent[]): { input: ConvertedMessages; output: ConvertedMessages } {
  const input = emptyConversion();
  const output = emptyConversion();
  for (const event of events) {
    let body = parseMaybeJson(event.body);
    if (isRecord(body) && body['gen_ai.event.content'] !== undefined) body = parseMaybeJson(body['gen_ai.event.content']);
    if (event.name === 'gen_ai.client.inference.operation.details' && isRecord(body)) {
      if (body['gen_ai.input.messages'] !== undefined) convertGenAiMessages(body['gen_ai.input.messages'], input);
      if (body['gen_ai.output.messages'] !== undefined) convertGenAiMessages(body['gen_ai.output.messages'], output);
      continue;
    }
    const row = rowsByName.get(event.name);
    if (!row) continue;
    eventMessage(row, isRecord(body) ? body : { content: body }, row.side === 'input' ? input : output);
  }
  return { input, output };
}

/**
 * Events that mark the first token of a stream: its time minus the span's start is the time to
 * first token. The first matching event wins (OpenLLMetry records one event per chunk).
 */
export const firstTokenEvents = [
  'First Token Stream Event', // OpenInference
  'llm.content.completion.chunk', // OpenLLMetry, one per chunk
  'gen_ai.content.completion.chunk',
  'ai.stream.firstChunk', // ai SDK
];
