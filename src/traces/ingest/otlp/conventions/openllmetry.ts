import { convertAiSdkToolCalls, emptyConversion, toSpanIO } from '../values/io-genai.js';
import { asArguments, asString, collectIndexed, isRecord, parseMaybeJson, toRole } from '../values/io-values.js';
import type { SpanMessage, SpanToolCall } from '../wire/model.js';
import type { FieldRow, IORow, KindRow, TraceFieldRow } from './table.js';

/**
 * Traceloop OpenLLMetry: `llm.request.type`, `traceloop.span.kind` (workflow, task, agent,
 * tool), `traceloop.entity.input/output`, and before 0.55 the flattened legacy messages
 * `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` with their `tool_calls.M.*`.
 */

/** `gen_ai.prompt.N.role|content|tool_call_id|tool_calls.M.id|name|arguments`, in index order. */
function legacyMessages(prefix: string, side: 'input' | 'output'): IORow {
  return {
    id: prefix,
    keys: [`${prefix}.`],
    read(attrs) {
      const { items, keys } = collectIndexed(attrs, `${prefix}.`);
      const out = emptyConversion();
      items.forEach((item, index) => {
        const sent = item.role;
        const { role, exact } =
          sent === undefined ? { role: side === 'input' ? ('user' as const) : ('assistant' as const), exact: true } : toRole(sent);
        if (!exact) out.extras.push({ message: index, role: sent });
        const calls: SpanToolCall[] = collectIndexed(item, 'tool_calls.').items.map((call) => ({
          id: asString(call.id) ?? '',
          name: asString(call.name) ?? '',
          arguments: asArguments(call.arguments),
        }));
        // OpenLLMetry also writes the calls as one JSON attribute in some versions.
        if (calls.length === 0 && item.tool_calls !== undefined) calls.push(...convertAiSdkToolCalls(item.tool_calls));
        const message: SpanMessage = {
          role,
          content: typeof item.content === 'string' ? item.content : item.content === undefined ? '' : JSON.stringify(item.content),
        };
        const toolCallId = asString(item.tool_call_id);
        if (toolCallId) message.toolCallId = toolCallId;
        if (calls.length > 0) message.toolCalls = calls;
        if (item.finish_reason !== undefined) out.extras.push({ message: index, finish_reason: item.finish_reason });
        out.messages.push(message);
      });
      return { [side]: toSpanIO(out, prefix), consumed: keys };
    },
  };
}

/**
 * `traceloop.entity.input/output`: the decorated function's arguments (`{args, kwargs}`) and
 * return value as JSON. On a tool span they are the call; elsewhere the text as sent.
 */
const entityRow: IORow = {
  id: 'traceloop.entity',
  keys: ['traceloop.entity.input', 'traceloop.entity.output'],
  read(attrs) {
    const consumed: string[] = [];
    const input = attrs['traceloop.entity.input'];
    const output = attrs['traceloop.entity.output'];
    if (input !== undefined) consumed.push('traceloop.entity.input');
    if (output !== undefined) consumed.push('traceloop.entity.output');
    // A JSON-encoded string (a function returning text) is that text; other JSON stays as sent.
    const decoded = (v: unknown): unknown => {
      if (typeof v !== 'string' || !v.startsWith('"')) return parseMaybeJson(v);
      try {
        return JSON.parse(v) as unknown;
      } catch {
        return v;
      }
    };
    const text = (v: unknown) => {
      const d = decoded(v);
      return typeof d === 'string' && typeof v === 'string' && v.startsWith('"') ? d : typeof v === 'string' ? v : JSON.stringify(v);
    };
    if (attrs['traceloop.span.kind'] === 'tool') {
      const parsed = decoded(input);
      const args =
        isRecord(parsed) && isRecord(parsed.kwargs) && Array.isArray(parsed.args) && parsed.args.length === 0
          ? parsed.kwargs
          : asArguments(parsed);
      const call: SpanToolCall = { id: '', name: asString(attrs['traceloop.entity.name']) ?? '', arguments: args };
      return {
        ...(input !== undefined ? { input: { toolCalls: [call] } } : {}),
        ...(output !== undefined ? { output: { toolCalls: [{ ...call, result: parseMaybeJson(decoded(output)) }] } } : {}),
        consumed,
      };
    }
    return {
      ...(input !== undefined ? { input: { text: text(input) } } : {}),
      ...(output !== undefined ? { output: { text: text(output) } } : {}),
      consumed,
    };
  },
};

export const openLlmetry = {
  kinds: [
    { key: 'llm.request.type', value: 'chat', kind: 'llm.chat' },
    { key: 'llm.request.type', value: 'completion', kind: 'llm.completion' },
    { key: 'llm.request.type', value: 'embedding', kind: 'llm.embedding' },
    { key: 'llm.request.type', value: 'rerank', kind: 'rerank' },
    { key: 'traceloop.span.kind', value: 'workflow', kind: 'workflow' },
    { key: 'traceloop.span.kind', value: 'task', kind: 'chain' },
    { key: 'traceloop.span.kind', value: 'agent', kind: 'agent' },
    { key: 'traceloop.span.kind', value: 'tool', kind: 'tool' },
  ] satisfies KindRow[],
  fields: [
    { field: 'inputTokens', key: 'gen_ai.usage.prompt_tokens' },
    { field: 'outputTokens', key: 'gen_ai.usage.completion_tokens' },
    { field: 'totalTokens', key: 'llm.usage.total_tokens' },
    { field: 'cacheReadTokens', key: 'gen_ai.usage.cache_read_input_tokens' },
    { field: 'cacheWriteTokens', key: 'gen_ai.usage.cache_creation_input_tokens' },
    { field: 'reasoningTokens', key: 'llm.usage.reasoning_tokens' },
    { field: 'promptName', key: 'traceloop.prompt.key' },
    { field: 'promptVersion', key: 'traceloop.prompt.version' },
  ] satisfies FieldRow[],
  traceFields: [
    { field: 'sessionId', key: 'traceloop.association.properties.session_id' },
    { field: 'userId', key: 'traceloop.association.properties.user_id' },
  ] satisfies TraceFieldRow[],
  io: [legacyMessages('gen_ai.prompt', 'input'), legacyMessages('gen_ai.completion', 'output'), entityRow] satisfies IORow[],
};
