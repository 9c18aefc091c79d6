import { convertOpenAiMessages, emptyConversion, toSpanIO, type ConvertedMessages } from '../values/io-genai.js';
import { asString, isRecord, parseMaybeJson } from '../values/io-values.js';
import type { SpanIO } from '../wire/model.js';
import type { Attrs, FieldRow, IORow, KindRow, TraceFieldRow } from './table.js';

/**
 * LangSmith's OpenTelemetry mode (`langsmith/experimental/otel`, `LANGSMITH_OTEL_ENABLED`):
 * the run type in `langsmith.span.kind`, the run's metadata flattened under
 * `langsmith.metadata.*` (LangChain's `ls_provider`, the application's `session_id` and
 * `user_id`), and the whole run inputs and outputs as JSON in `gen_ai.prompt` and
 * `gen_ai.completion` (not OpenLLMetry's indexed `gen_ai.prompt.N.*`). Its `gen_ai.system`
 * is a guess from the model name that falls back to `langchain`, and its
 * `gen_ai.operation.name` maps a retriever to `embeddings` and a prompt to `chat`: the run
 * type comes first. `langsmith.trace.session_id` is the LangSmith project, not a session.
 */

const runType = (value: string, kind: KindRow['kind']): KindRow => ({ key: 'langsmith.span.kind', value, kind });

/** LangChain's serialized message classes, by the last part of their id. */
const langChainRoles: Record<string, string> = {
  HumanMessage: 'user',
  HumanMessageChunk: 'user',
  AIMessage: 'assistant',
  AIMessageChunk: 'assistant',
  SystemMessage: 'system',
  ToolMessage: 'tool',
  FunctionMessage: 'tool',
};

/**
 * One message in OpenAI's shape from LangChain's forms: serialized (`{lc: 1, type:
 * "constructor", id: [..., "AIMessage"], kwargs: {content, tool_calls, tool_call_id}}`), or
 * plain (`{type: "human" | "ai" | "system" | "tool", content}`); anything else as it is.
 */
function openAiShaped(message: unknown): unknown {
  if (!isRecord(message)) return message;
  if (isRecord(message.kwargs) && Array.isArray(message.id)) {
    const kwargs = message.kwargs;
    const role = asString(kwargs.role) ?? langChainRoles[String(message.id[message.id.length - 1])] ?? 'user';
    return { role, content: kwargs.content, tool_calls: kwargs.tool_calls, tool_call_id: kwargs.tool_call_id, name: kwargs.name };
  }
  if (message.role === undefined && typeof message.type === 'string' && plainTypes.has(message.type)) {
    const data = isRecord(message.data) ? message.data : message;
    const role = message.type === 'chat' ? (asString(data.role) ?? 'user') : message.type;
    return { role, content: data.content, tool_calls: data.tool_calls, tool_call_id: data.tool_call_id, name: data.name };
  }
  return message;
}

/** LangChain's plain message types (`{type: "human", content}`, or `{type, data: {content}}` as stored). */
const plainTypes = new Set(['human', 'ai', 'system', 'tool', 'function', 'chat', 'developer']);

const isMessage = (m: unknown) =>
  isRecord(m) &&
  (typeof m.role === 'string' || (isRecord(m.kwargs) && Array.isArray(m.id)) || (typeof m.type === 'string' && plainTypes.has(m.type)));

/** A list of messages (LangChain nests one list per prompt: `[[...]]`), or undefined. */
function messageList(value: unknown): unknown[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const flat = value.every(Array.isArray) ? (value as unknown[][]).flat() : value;
  return flat.length > 0 && flat.every(isMessage) ? flat.map(openAiShaped) : undefined;
}

/** The answer messages of a run's outputs: OpenAI's `choices`, LangChain's `generations`, one message. */
function answerMessages(outputs: Record<string, unknown>, out: ConvertedMessages): boolean {
  if (Array.isArray(outputs.choices)) {
    const messages = outputs.choices.filter(isRecord).map((c) => (isRecord(c.message) ? c.message : { content: c.text ?? '' }));
    convertOpenAiMessages(messages, out, 'assistant');
    return true;
  }
  if (Array.isArray(outputs.generations)) {
    const generations = (
      outputs.generations.every(Array.isArray) ? (outputs.generations as unknown[][]).flat() : outputs.generations
    ).filter(isRecord);
    convertOpenAiMessages(
      generations.map((g) => (g.message !== undefined ? openAiShaped(g.message) : { content: g.text ?? '' })),
      out,
      'assistant',
    );
    return true;
  }
  if (isMessage(outputs)) {
    convertOpenAiMessages(openAiShaped(outputs), out, 'assistant');
    return true;
  }
  if (isMessage(outputs.output)) {
    convertOpenAiMessages(openAiShaped(outputs.output), out, 'assistant');
    return true;
  }
  return false;
}

/** What is not a message of a run's inputs or outputs stays beside them (the tools offered, the usage). */
function withRest(io: SpanIO, record: Record<string, unknown>, taken: readonly string[]): SpanIO {
  let raw: Record<string, unknown> | undefined;
  for (const key in record) {
    if (taken.includes(key)) continue;
    raw ??= isRecord(io.raw) ? { ...io.raw } : {};
    raw[key] = record[key];
  }
  if (raw) io.raw = raw;
  return io;
}

/** The sent text as it came (never parsed and written again), or JSON of a structured value. */
const asText = (sent: unknown): SpanIO => ({ text: typeof sent === 'string' ? sent : JSON.stringify(sent) });
const inputKeys = ['messages'] as const;
const outputKeys = ['choices', 'generations', 'output'] as const;

function runInputs(value: unknown): SpanIO {
  const parsed = parseMaybeJson(value);
  const direct = messageList(parsed);
  if (direct) return toSpanIO(convertOpenAiMessages(direct), 'langsmith');
  if (isRecord(parsed)) {
    const messages = messageList(parsed.messages);
    if (messages) return withRest(toSpanIO(convertOpenAiMessages(messages), 'langsmith'), parsed, inputKeys);
  }
  return asText(value);
}

function runOutputs(value: unknown, generation: boolean): SpanIO {
  const parsed = parseMaybeJson(value);
  if (isRecord(parsed)) {
    const out = emptyConversion();
    if (answerMessages(parsed, out)) return withRest(toSpanIO(out, 'langsmith'), parsed, outputKeys);
  }
  if (typeof parsed === 'string' && generation) return { messages: [{ role: 'assistant', content: parsed }] };
  return asText(value);
}

const isGeneration = (attrs: Attrs) => attrs['langsmith.span.kind'] === 'llm';

/**
 * The run's inputs or outputs, parsed only when no other convention gave that side messages:
 * otherwise the whole request or response JSON repeats them, and is consumed as a duplicate
 * (recorded in metadata.otel.trimmed) without being read.
 */
const runRow = (key: 'gen_ai.prompt' | 'gen_ai.completion'): IORow => ({
  // Not OpenLLMetry's rows of the same prefix (`gen_ai.prompt.N.*`): the exact key.
  id: `${key} (LangSmith)`,
  keys: [key],
  read: (attrs, mapped) => {
    const side = key === 'gen_ai.prompt' ? 'input' : 'output';
    if (mapped[side].messages?.length) return { consumed: [key], duplicates: [key] };
    return side === 'input'
      ? { input: runInputs(attrs[key]), consumed: [key] }
      : { output: runOutputs(attrs[key], isGeneration(attrs)), consumed: [key] };
  },
});

export const langSmith = {
  kinds: [
    runType('llm', 'llm.chat'),
    runType('embedding', 'llm.embedding'),
    runType('retriever', 'retrieval'),
    runType('tool', 'tool'),
    runType('chain', 'chain'),
    runType('prompt', 'chain'),
    runType('parser', 'chain'),
  ] satisfies KindRow[],
  /** Before GenAI's rows: LangChain's own provider name beats LangSmith's guess in `gen_ai.system`. */
  fields: [{ field: 'provider', key: 'langsmith.metadata.ls_provider' }] satisfies FieldRow[],
  traceFields: [
    { field: 'sessionId', key: 'langsmith.metadata.session_id' },
    { field: 'sessionId', key: 'langsmith.metadata.thread_id' },
    { field: 'sessionId', key: 'langsmith.metadata.conversation_id' },
    { field: 'userId', key: 'langsmith.metadata.user_id' },
  ] satisfies TraceFieldRow[],
  io: [runRow('gen_ai.prompt'), runRow('gen_ai.completion')] satisfies IORow[],
};
