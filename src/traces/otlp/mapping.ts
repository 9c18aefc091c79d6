import type { Attributes, SpanIO, SpanKind, SpanToolCall } from './model.js';
import { spanKinds } from './model.js';
import { asArguments, asNumber, asString, parseMaybeJson } from './io-values.js';
import { convertAiSdkMessages, convertAiSdkToolCalls, convertGenAiMessages, convertSystemInstructions, toSpanIO } from './io-genai.js';
import { convertOpenInferenceDocuments, convertOpenInferenceMessages } from './io-openinference.js';

/**
 * How OTel span attributes become native span fields. Every table is ordered most specific
 * first; the first row that yields a value wins. Keys a row turns into a native field are
 * removed from `attributes`; every other attribute (and each losing alternative) stays.
 */

type Attrs = Record<string, unknown>;

// ---- kind -------------------------------------------------------------------------------

export interface KindRow {
  key: string;
  /** Compared case-insensitively; '*' takes any value that names a native kind. */
  value: string;
  kind: SpanKind;
  when?: (attrs: Attrs) => boolean;
  /** Whether the attribute is wholly expressed by the kind (then it leaves `attributes`). */
  consumed?: boolean;
}

const hasPrompts = (a: Attrs) => Object.keys(a).some((k) => k === 'llm.prompts' || k.startsWith('llm.prompts.'));
const isGraphNode = (a: Attrs) => a['graph.node.id'] !== undefined;

export const kindRows: KindRow[] = [
  // The native extension: the only way to say graph, edge, workflow or middleware.
  { key: 'loupe.span.kind', value: '*', kind: 'custom', consumed: true },
  { key: 'gen_ai.operation.name', value: 'chat', kind: 'llm.chat' },
  { key: 'gen_ai.operation.name', value: 'generate_content', kind: 'llm.chat' },
  { key: 'gen_ai.operation.name', value: 'text_completion', kind: 'llm.completion' },
  { key: 'gen_ai.operation.name', value: 'embeddings', kind: 'llm.embedding' },
  { key: 'gen_ai.operation.name', value: 'execute_tool', kind: 'tool' },
  { key: 'gen_ai.operation.name', value: 'invoke_agent', kind: 'agent' },
  { key: 'gen_ai.operation.name', value: 'create_agent', kind: 'agent' },
  { key: 'gen_ai.operation.name', value: 'retrieval', kind: 'retrieval' },
  { key: 'openinference.span.kind', value: 'LLM', kind: 'llm.completion', when: hasPrompts },
  { key: 'openinference.span.kind', value: 'LLM', kind: 'llm.chat' },
  { key: 'openinference.span.kind', value: 'EMBEDDING', kind: 'llm.embedding' },
  { key: 'openinference.span.kind', value: 'TOOL', kind: 'tool' },
  { key: 'openinference.span.kind', value: 'AGENT', kind: 'agent' },
  { key: 'openinference.span.kind', value: 'RETRIEVER', kind: 'retrieval' },
  { key: 'openinference.span.kind', value: 'RERANKER', kind: 'rerank' },
  { key: 'openinference.span.kind', value: 'GUARDRAIL', kind: 'guardrail' },
  { key: 'openinference.span.kind', value: 'CHAIN', kind: 'node', when: isGraphNode },
  { key: 'openinference.span.kind', value: 'CHAIN', kind: 'chain' },
  // The ai SDK's telemetry names its spans by operation: provider calls, tool calls, and the
  // wrapping call (a chain, so its repeated usage is not counted twice).
  { key: 'ai.operationId', value: 'ai.generateText.doGenerate', kind: 'llm.chat' },
  { key: 'ai.operationId', value: 'ai.streamText.doStream', kind: 'llm.chat' },
  { key: 'ai.operationId', value: 'ai.generateObject.doGenerate', kind: 'llm.chat' },
  { key: 'ai.operationId', value: 'ai.streamObject.doStream', kind: 'llm.chat' },
  { key: 'ai.operationId', value: 'ai.embed.doEmbed', kind: 'llm.embedding' },
  { key: 'ai.operationId', value: 'ai.embedMany.doEmbed', kind: 'llm.embedding' },
  { key: 'ai.operationId', value: 'ai.rerank.doRerank', kind: 'rerank' },
  { key: 'ai.operationId', value: 'ai.toolCall', kind: 'tool' },
  { key: 'ai.operationId', value: 'ai.generateText', kind: 'chain' },
  { key: 'ai.operationId', value: 'ai.streamText', kind: 'chain' },
  { key: 'ai.operationId', value: 'ai.generateObject', kind: 'chain' },
  { key: 'ai.operationId', value: 'ai.streamObject', kind: 'chain' },
];

const nativeKinds = new Set<string>(spanKinds);

export function mapKind(attrs: Attrs): { kind: SpanKind; consumed: string[] } {
  for (const row of kindRows) {
    const value = attrs[row.key];
    if (typeof value !== 'string') continue;
    if (row.value === '*') {
      if (nativeKinds.has(value)) return { kind: value as SpanKind, consumed: [row.key] };
      continue;
    }
    if (value.toLowerCase() !== row.value.toLowerCase()) continue;
    if (row.when && !row.when(attrs)) continue;
    return { kind: row.kind, consumed: row.consumed ? [row.key] : [] };
  }
  return { kind: 'custom', consumed: [] };
}

// ---- metrics ----------------------------------------------------------------------------

export type MetricField = 'model' | 'provider' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'costUsd';

export const fieldRows: { field: MetricField; key: string }[] = [
  { field: 'model', key: 'gen_ai.response.model' },
  { field: 'model', key: 'gen_ai.request.model' },
  { field: 'model', key: 'llm.model_name' },
  { field: 'model', key: 'ai.response.model' },
  { field: 'model', key: 'ai.model.id' },
  { field: 'provider', key: 'gen_ai.provider.name' },
  { field: 'provider', key: 'gen_ai.system' },
  { field: 'provider', key: 'llm.provider' },
  { field: 'provider', key: 'llm.system' },
  { field: 'provider', key: 'ai.model.provider' },
  { field: 'inputTokens', key: 'gen_ai.usage.input_tokens' },
  { field: 'inputTokens', key: 'gen_ai.usage.prompt_tokens' },
  { field: 'inputTokens', key: 'llm.token_count.prompt' },
  { field: 'inputTokens', key: 'ai.usage.inputTokens' },
  { field: 'inputTokens', key: 'ai.usage.promptTokens' },
  { field: 'outputTokens', key: 'gen_ai.usage.output_tokens' },
  { field: 'outputTokens', key: 'gen_ai.usage.completion_tokens' },
  { field: 'outputTokens', key: 'llm.token_count.completion' },
  { field: 'outputTokens', key: 'ai.usage.outputTokens' },
  { field: 'outputTokens', key: 'ai.usage.completionTokens' },
  { field: 'totalTokens', key: 'gen_ai.usage.total_tokens' },
  { field: 'totalTokens', key: 'llm.token_count.total' },
  { field: 'totalTokens', key: 'ai.usage.totalTokens' },
  { field: 'costUsd', key: 'loupe.cost_usd' },
  { field: 'costUsd', key: 'gen_ai.usage.cost' },
  { field: 'costUsd', key: 'llm.cost.total' },
];

export type MetricFields = { model?: string; provider?: string; inputTokens?: number; outputTokens?: number; totalTokens?: number; costUsd?: number };

export function mapMetrics(attrs: Attrs): { fields: MetricFields; consumed: string[] } {
  const fields: MetricFields = {};
  const consumed: string[] = [];
  for (const row of fieldRows) {
    if (fields[row.field] !== undefined || attrs[row.key] === undefined) continue;
    const value = row.field === 'model' || row.field === 'provider' ? asString(attrs[row.key]) : asNumber(attrs[row.key]);
    if (value === undefined || value === '' || (typeof value === 'number' && value < 0)) continue;
    (fields as Record<string, unknown>)[row.field] = value;
    consumed.push(row.key);
  }
  if (fields.totalTokens === undefined && fields.inputTokens !== undefined && fields.outputTokens !== undefined) {
    fields.totalTokens = fields.inputTokens + fields.outputTokens;
  }
  return { fields, consumed };
}

// ---- trace fields (span attributes first, then resource attributes) ----------------------

export const traceFieldRows: { field: 'environment' | 'sessionId'; key: string }[] = [
  { field: 'environment', key: 'deployment.environment.name' },
  { field: 'environment', key: 'deployment.environment' },
  { field: 'sessionId', key: 'session.id' },
  { field: 'sessionId', key: 'gen_ai.conversation.id' },
];

export function mapTraceFields(span: Attributes, resource: Attributes): { environment?: string; sessionId?: string } {
  const out: { environment?: string; sessionId?: string } = {};
  for (const attrs of [span, resource]) {
    for (const row of traceFieldRows) {
      if (out[row.field] !== undefined) continue;
      const value = asString(attrs[row.key]);
      if (value) out[row.field] = value;
    }
  }
  return out;
}

// ---- input and output -------------------------------------------------------------------

export interface IORow {
  id: string;
  /** The row runs when one of these keys is present (prefixes end with a dot). */
  keys: string[];
  read(attrs: Attrs): { input?: SpanIO; output?: SpanIO; consumed: string[] };
}

/** Whether a row's trigger key (or a key under a trigger prefix ending in a dot) is left. */
function present(attrs: Attrs, key: string, consumed: Set<string>): boolean {
  if (!key.endsWith('.')) return attrs[key] !== undefined && !consumed.has(key);
  for (const k in attrs) if (k.startsWith(key) && !consumed.has(k)) return true;
  return false;
}

/** One tool call from a span's own attributes (gen_ai execute_tool, ai SDK, OpenInference). */
function toolCallRow(id: string, keys: { name: string; id: string; args: string; result: string }): IORow {
  return {
    id,
    keys: [keys.name],
    read(attrs) {
      const call: SpanToolCall = {
        id: asString(attrs[keys.id]) ?? '',
        name: asString(attrs[keys.name]) ?? '',
        arguments: asArguments(attrs[keys.args]),
      };
      const consumed = [keys.name, keys.id, keys.args].filter((k) => attrs[k] !== undefined);
      const output = attrs[keys.result] !== undefined ? { toolCalls: [{ ...call, result: parseMaybeJson(attrs[keys.result]) }] } : undefined;
      if (output) consumed.push(keys.result);
      return { input: { toolCalls: [call] }, ...(output ? { output } : {}), consumed };
    },
  };
}

const messagesRow = (id: string, side: 'input' | 'output', convert: (v: unknown) => ReturnType<typeof convertGenAiMessages>): IORow => ({
  id,
  keys: [id],
  read: (attrs) => ({ [side]: toSpanIO(convert(attrs[id]), id), consumed: [id] }),
});

const openInferenceMessagesRow = (prefix: string, side: 'input' | 'output'): IORow => ({
  id: prefix,
  keys: [`${prefix}.`],
  read(attrs) {
    const { converted, keys } = convertOpenInferenceMessages(attrs, prefix);
    return { [side]: toSpanIO(converted, prefix), consumed: keys };
  },
});

const documentsRow = (prefix: string, side: 'input' | 'output'): IORow => ({
  id: prefix,
  keys: [`${prefix}.`],
  read(attrs) {
    const { documents, keys } = convertOpenInferenceDocuments(attrs, prefix);
    return { [side]: { documents }, consumed: keys };
  },
});

const textRow = (key: string, side: 'input' | 'output', mimeKey: string): IORow => ({
  id: key,
  keys: [key],
  read: (attrs) => ({
    [side]: { text: asString(attrs[key]) ?? JSON.stringify(attrs[key]) },
    consumed: [key, ...(attrs[mimeKey] !== undefined ? [mimeKey] : [])],
  }),
});

export const ioRows: IORow[] = [
  messagesRow('gen_ai.system_instructions', 'input', convertSystemInstructions),
  messagesRow('gen_ai.input.messages', 'input', convertGenAiMessages),
  messagesRow('gen_ai.output.messages', 'output', convertGenAiMessages),
  toolCallRow('gen_ai.tool', { name: 'gen_ai.tool.name', id: 'gen_ai.tool.call.id', args: 'gen_ai.tool.call.arguments', result: 'gen_ai.tool.call.result' }),
  toolCallRow('ai.toolCall', { name: 'ai.toolCall.name', id: 'ai.toolCall.id', args: 'ai.toolCall.args', result: 'ai.toolCall.result' }),
  // OpenInference tool spans carry the call's arguments and result as input.value/output.value.
  toolCallRow('tool.name', { name: 'tool.name', id: 'tool_call.id', args: 'input.value', result: 'output.value' }),
  openInferenceMessagesRow('llm.input_messages', 'input'),
  openInferenceMessagesRow('llm.output_messages', 'output'),
  documentsRow('retrieval.documents', 'output'),
  documentsRow('reranker.input_documents', 'input'),
  documentsRow('reranker.output_documents', 'output'),
  textRow('reranker.query', 'input', 'reranker.query.mime_type'),
  messagesRow('ai.prompt.messages', 'input', convertAiSdkMessages),
  messagesRow('ai.prompt', 'input', convertAiSdkMessages),
  {
    id: 'ai.response.text',
    keys: ['ai.response.text'],
    read: (attrs) => ({ output: { messages: [{ role: 'assistant', content: asString(attrs['ai.response.text']) ?? '' }] }, consumed: ['ai.response.text'] }),
  },
  {
    id: 'ai.response.toolCalls',
    keys: ['ai.response.toolCalls'],
    read: (attrs) => ({ output: { toolCalls: convertAiSdkToolCalls(attrs['ai.response.toolCalls']) }, consumed: ['ai.response.toolCalls'] }),
  },
  textRow('input.value', 'input', 'input.mime_type'),
  textRow('output.value', 'output', 'output.mime_type'),
];

function mergeIO(into: SpanIO, add: SpanIO | undefined) {
  if (!add) return;
  if (add.messages?.length) into.messages = [...(into.messages ?? []), ...add.messages];
  if (add.toolCalls?.length) into.toolCalls = [...(into.toolCalls ?? []), ...add.toolCalls];
  if (add.documents?.length) into.documents = [...(into.documents ?? []), ...add.documents];
  if (add.text !== undefined) {
    if (into.text === undefined) into.text = add.text;
    else into.raw = { ...(into.raw as object), text: add.text };
  }
  if (add.raw !== undefined) into.raw = { ...(into.raw as object), ...(add.raw as object) };
}

export function mapIO(attrs: Attrs): { input?: SpanIO; output?: SpanIO; consumed: string[] } {
  const input: SpanIO = {};
  const output: SpanIO = {};
  // A row runs only on keys no earlier row took, so one attribute never lands twice.
  const consumed = new Set<string>();
  for (const row of ioRows) {
    if (!row.keys.some((k) => present(attrs, k, consumed))) continue;
    const result = row.read(attrs);
    mergeIO(input, result.input);
    mergeIO(output, result.output);
    for (const key of result.consumed) consumed.add(key);
  }
  return {
    ...(Object.keys(input).length > 0 ? { input } : {}),
    ...(Object.keys(output).length > 0 ? { output } : {}),
    consumed: [...consumed],
  };
}
