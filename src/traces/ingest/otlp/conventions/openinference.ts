import { convertOpenInferenceDocuments, convertOpenInferenceMessages } from '../values/io-openinference.js';
import { toSpanIO } from '../values/io-genai.js';
import { asString, collectIndexed, isRecord, parseMaybeJson } from '../values/io-values.js';
import { textRow, toolCallRow, type Attrs, type FieldRow, type IORow, type KindRow, type TraceFieldRow } from './table.js';

/**
 * Arize OpenInference: `openinference.span.kind`, `llm.*` and `embedding.*` attributes,
 * flattened message and document lists, and the raw request and response JSON
 * (`input.value`, `output.value`), kept only when nothing better was mapped for its side.
 */

const hasPrompts = (a: Attrs) => Object.keys(a).some((k) => k === 'llm.prompts' || k.startsWith('llm.prompts.'));
const isGraphNode = (a: Attrs) => a['graph.node.id'] !== undefined;

/**
 * LangChain's provider name (`ls_provider`) inside the run metadata that the LangChain
 * instrumentation writes as one JSON attribute, `metadata`: the only carrier of the provider.
 */
const providerOfMetadata = (value: unknown) => {
  const parsed = parseMaybeJson(value);
  const provider = isRecord(parsed) ? asString(parsed.ls_provider) : undefined;
  return provider ? { provider } : undefined;
};

/** The model a call asked for, from its invocation parameters (all an error span has). */
const modelOfParameters = (value: unknown) => {
  const parsed = parseMaybeJson(value);
  const model = isRecord(parsed) ? asString(parsed.model) : undefined;
  return model ? { model } : undefined;
};

const messagesRow = (prefix: string, side: 'input' | 'output'): IORow => ({
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

/** The embedded texts (`embedding.embeddings.N.embedding.text`); the vectors stay, trimmed, in attributes. */
const embeddingTextsRow: IORow = {
  id: 'embedding.embeddings',
  keys: ['embedding.embeddings.'],
  read(attrs) {
    const { items } = collectIndexed(attrs, 'embedding.embeddings.');
    const texts = items.map((item) => asString(item['embedding.text'])).filter((t): t is string => t !== undefined);
    const consumed = Object.keys(attrs).filter((k) => k.startsWith('embedding.embeddings.') && k.endsWith('.embedding.text'));
    if (texts.length === 0) return { consumed: [] };
    return { input: texts.length === 1 ? { text: texts[0]! } : { documents: texts.map((content) => ({ content })) }, consumed };
  },
};

export const openInference = {
  kinds: [
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
  ] satisfies KindRow[],
  fields: [
    { field: 'model', key: 'llm.model_name' },
    { field: 'model', key: 'embedding.model_name' },
    { field: 'provider', key: 'llm.provider' },
    { field: 'provider', key: 'llm.system' },
    { field: 'provider', key: 'metadata', read: providerOfMetadata, keep: true },
    { field: 'inputTokens', key: 'llm.token_count.prompt' },
    { field: 'outputTokens', key: 'llm.token_count.completion' },
    { field: 'totalTokens', key: 'llm.token_count.total' },
    { field: 'cacheReadTokens', key: 'llm.token_count.prompt_details.cache_read' },
    { field: 'cacheWriteTokens', key: 'llm.token_count.prompt_details.cache_write' },
    { field: 'reasoningTokens', key: 'llm.token_count.completion_details.reasoning' },
    { field: 'costUsd', key: 'llm.cost.total' },
    { field: 'promptName', key: 'llm.prompt_template.name' },
    { field: 'promptVersion', key: 'llm.prompt_template.version' },
  ] satisfies FieldRow[],
  fallbackFields: [
    { field: 'model', key: 'llm.invocation_parameters', read: modelOfParameters },
    { field: 'model', key: 'embedding.invocation_parameters', read: modelOfParameters },
  ] satisfies FieldRow[],
  traceFields: [{ field: 'tags', key: 'tag.tags' }] satisfies TraceFieldRow[],
  io: [
    // Tool spans carry the call's arguments and result as input.value/output.value.
    toolCallRow('tool.name', { name: 'tool.name', id: 'tool_call.id', args: 'input.value', result: 'output.value' }),
    messagesRow('llm.input_messages', 'input'),
    messagesRow('llm.output_messages', 'output'),
    documentsRow('retrieval.documents', 'output'),
    documentsRow('reranker.input_documents', 'input'),
    documentsRow('reranker.output_documents', 'output'),
    textRow('reranker.query', 'input', 'reranker.query.mime_type', false),
    embeddingTextsRow,
  ] satisfies IORow[],
  /** Last of all rows: the raw request and response, when nothing better was mapped. */
  rawIo: [textRow('input.value', 'input', 'input.mime_type'), textRow('output.value', 'output', 'output.mime_type')] satisfies IORow[],
};
