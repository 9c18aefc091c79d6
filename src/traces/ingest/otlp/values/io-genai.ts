import type { SpanIO, SpanMessage, SpanToolCall } from '../wire/model.js';
import { asArguments, asString, asText, isRecord, parseMaybeJson, toRole } from './io-values.js';

/**
 * OpenTelemetry GenAI messages (semantic conventions v1.37+): `gen_ai.input.messages`,
 * `gen_ai.output.messages` ([{role, parts, name?, finish_reason?}]) and
 * `gen_ai.system_instructions` ([part]), structured or as JSON text. Text parts become
 * message content, tool_call parts toolCalls, tool_call_response parts tool messages (and the
 * result of the matching call). What the native shape cannot hold (reasoning, blob, file and
 * uri parts, a finish reason, a role outside the four) goes to `raw[source]` as
 * `{message: index, ...}` entries, so nothing is dropped and nothing is stored twice.
 */
export interface ConvertedMessages {
  messages: SpanMessage[];
  toolCalls: SpanToolCall[];
  extras: Record<string, unknown>[];
}

export const emptyConversion = (): ConvertedMessages => ({ messages: [], toolCalls: [], extras: [] });

function convertParts(parts: unknown[], role: SpanMessage['role'], out: ConvertedMessages, index: number, name?: string) {
  const text: string[] = [];
  const calls: SpanToolCall[] = [];
  const responses: SpanMessage[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      text.push(part);
      continue;
    }
    if (!isRecord(part)) {
      out.extras.push({ message: index, part });
      continue;
    }
    const type = asString(part.type);
    if (type === 'text') text.push(asText(part.content ?? part.text));
    else if (type === 'tool_call') {
      calls.push({ id: asString(part.id) ?? '', name: asString(part.name) ?? '', arguments: asArguments(part.arguments) });
    } else if (type === 'tool_call_response') {
      const id = asString(part.id) ?? '';
      const result = part.response !== undefined ? part.response : part.result;
      responses.push({ role: 'tool', content: asText(result), ...(id ? { toolCallId: id } : {}) });
    } else out.extras.push({ message: index, part }); // reasoning, blob, file, uri, future types
  }
  // The turn keeps its place in the conversation: an assistant turn that only called tools is
  // a message with empty content and its toolCalls; each tool response is a tool message.
  if (text.length > 0 || calls.length > 0 || responses.length === 0) {
    out.messages.push({ role, content: text.join('\n'), ...(name ? { name } : {}), ...(calls.length > 0 ? { toolCalls: calls } : {}) });
  }
  out.messages.push(...responses);
}

export function convertGenAiMessages(value: unknown, out: ConvertedMessages = emptyConversion()) {
  const list = parseMaybeJson(value);
  if (!Array.isArray(list)) {
    if (typeof list === 'string') out.messages.push({ role: 'user', content: list });
    else out.extras.push({ value: list });
    return out;
  }
  list.forEach((message, index) => {
    if (!isRecord(message)) {
      out.extras.push({ message: index, value: message });
      return;
    }
    const { role, exact } = toRole(message.role);
    if (!exact) out.extras.push({ message: index, role: message.role });
    if (message.finish_reason !== undefined) out.extras.push({ message: index, finish_reason: message.finish_reason });
    const parts = Array.isArray(message.parts) ? message.parts : message.content !== undefined ? [asText(message.content)] : [];
    convertParts(parts, role, out, index, asString(message.name));
  });
  return out;
}

export function convertSystemInstructions(value: unknown, out: ConvertedMessages = emptyConversion()) {
  const parsed = parseMaybeJson(value);
  const parts = Array.isArray(parsed) ? parsed : [asText(parsed)];
  convertParts(parts, 'system', out, 0);
  return out;
}

/**
 * The ai SDK's own prompt format (`ai.prompt.messages`, `ai.prompt`): content is a string or
 * parts {type: text | tool-call | tool-result | reasoning | file | image}.
 */
export function convertAiSdkMessages(value: unknown, out: ConvertedMessages = emptyConversion()) {
  const parsed = parseMaybeJson(value);
  if (isRecord(parsed)) {
    // `ai.prompt`: {system?, prompt?, messages?}
    if (parsed.system !== undefined) out.messages.push({ role: 'system', content: asText(parsed.system) });
    if (typeof parsed.prompt === 'string') out.messages.push({ role: 'user', content: parsed.prompt });
    else if (Array.isArray(parsed.prompt)) convertAiSdkMessages(parsed.prompt, out);
    if (Array.isArray(parsed.messages)) convertAiSdkMessages(parsed.messages, out);
    return out;
  }
  if (!Array.isArray(parsed)) {
    out.extras.push({ value: parsed });
    return out;
  }
  for (const [index, message] of parsed.entries()) {
    if (!isRecord(message)) {
      out.extras.push({ message: index, value: message });
      continue;
    }
    const { role, exact } = toRole(message.role);
    if (!exact) out.extras.push({ message: index, role: message.role });
    if (typeof message.content === 'string') {
      out.messages.push({ role, content: message.content });
      continue;
    }
    const parts: unknown[] = Array.isArray(message.content) ? message.content : [];
    convertParts(
      parts.map((p) => {
        if (!isRecord(p)) return p;
        if (p.type === 'tool-call') return { type: 'tool_call', id: p.toolCallId, name: p.toolName, arguments: p.input ?? p.args };
        if (p.type === 'tool-result') {
          const output = isRecord(p.output) && 'value' in p.output ? p.output.value : (p.output ?? p.result);
          return { type: 'tool_call_response', id: p.toolCallId, response: output };
        }
        return p;
      }),
      role,
      out,
      index,
    );
  }
  return out;
}

/** `ai.response.toolCalls` (ai SDK) and OpenAI `tool_calls`: [{toolCallId, toolName, input | args}] or [{id, function: {name, arguments}}]. */
export function convertAiSdkToolCalls(value: unknown): SpanToolCall[] {
  const parsed = parseMaybeJson(value);
  if (!Array.isArray(parsed)) return [];
  return parsed.filter(isRecord).map((c) => {
    const fn = isRecord(c.function) ? c.function : undefined;
    return {
      id: asString(c.toolCallId ?? c.id) ?? '',
      name: asString(c.toolName ?? fn?.name ?? c.name) ?? '',
      arguments: asArguments(c.input ?? c.args ?? fn?.arguments ?? c.arguments),
    };
  });
}

/**
 * OpenAI chat messages ([{role, content, tool_calls?, tool_call_id?, name?}], or one such
 * message): Langfuse's observation input and output, GenAI event bodies. Content given as
 * parts keeps its text parts; other parts go to the extras.
 */
export function convertOpenAiMessages(
  value: unknown,
  out: ConvertedMessages = emptyConversion(),
  defaultRole: SpanMessage['role'] = 'user',
) {
  const parsed = parseMaybeJson(value);
  const list = Array.isArray(parsed) ? parsed : [parsed];
  list.forEach((message, index) => {
    if (typeof message === 'string') {
      out.messages.push({ role: defaultRole, content: message });
      return;
    }
    if (!isRecord(message)) {
      out.extras.push({ message: index, value: message });
      return;
    }
    const { role, exact } = message.role === undefined ? { role: defaultRole, exact: true } : toRole(message.role);
    if (!exact) out.extras.push({ message: index, role: message.role });
    const calls = convertAiSdkToolCalls(message.tool_calls);
    let content: string;
    if (Array.isArray(message.content)) {
      const text: string[] = [];
      for (const part of message.content) {
        if (typeof part === 'string') text.push(part);
        else if (isRecord(part) && (part.type === 'text' || part.type === 'input_text' || part.type === 'output_text'))
          text.push(asText(part.text ?? part.content));
        else out.extras.push({ message: index, part });
      }
      content = text.join('\n');
    } else content = asText(message.content);
    const name = asString(message.name);
    const toolCallId = asString(message.tool_call_id ?? (role === 'tool' ? message.id : undefined));
    out.messages.push({
      role,
      content,
      ...(name ? { name } : {}),
      ...(toolCallId ? { toolCallId } : {}),
      ...(calls.length > 0 ? { toolCalls: calls } : {}),
    });
  });
  return out;
}

/** One SpanIO side from converted messages; what they could not hold goes under raw[source]. */
export function toSpanIO(converted: ConvertedMessages, source: string): SpanIO {
  const io: SpanIO = {};
  if (converted.messages.length > 0) io.messages = converted.messages;
  if (converted.toolCalls.length > 0) io.toolCalls = converted.toolCalls;
  if (converted.extras.length > 0) io.raw = { [source]: converted.extras };
  return io;
}
