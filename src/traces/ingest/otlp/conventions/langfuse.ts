import { convertOpenAiMessages, emptyConversion, toSpanIO } from '../values/io-genai.js';
import { providerOfModel } from '../../../cost/provider.js';
import { asNumber, asString, isRecord, parseMaybeJson } from '../values/io-values.js';
import type { SpanIO } from '../wire/model.js';
import {
  readCompletionStart,
  type Attrs,
  type FieldRow,
  type IORow,
  type KindRow,
  type MetricFields,
  type StatusRow,
  type TraceFieldRow,
} from './table.js';

/**
 * Langfuse SDKs (v3+, OpenTelemetry based): `langfuse.observation.*` on every span,
 * `langfuse.trace.*`, `langfuse.session.id`, `langfuse.user.id`, `langfuse.environment`.
 * The observation type is explicit, so it comes before every other convention's kind.
 */

const typed = (value: string, kind: KindRow['kind']): KindRow => ({ key: 'langfuse.observation.type', value, kind });

const count = (record: Record<string, unknown>, ...keys: string[]) => {
  for (const key of keys) {
    const n = asNumber(record[key]);
    if (n !== undefined && n >= 0) return n;
  }
  return undefined;
};
const nested = (record: Record<string, unknown>, key: string) => (isRecord(record[key]) ? record[key] : {});
const defined = (fields: MetricFields): MetricFields => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));

/**
 * `usage_details`: OpenAI's usage object as the wrapper sends it (`prompt_tokens` including
 * `prompt_tokens_details.cached_tokens`), or Langfuse's own buckets (`input`, `output`,
 * `input_cached_tokens`, `cache_read_input_tokens`, ...), where the cache and reasoning buckets
 * are apart from `input` / `output`: they are added in, so the counts mean what they mean for
 * every other convention (details included in the main counts).
 */
export function readUsageDetails(value: unknown): MetricFields | undefined {
  const usage = parseMaybeJson(value);
  if (!isRecord(usage)) return undefined;
  if (usage.prompt_tokens !== undefined || usage.completion_tokens !== undefined) {
    return defined({
      inputTokens: count(usage, 'prompt_tokens'),
      outputTokens: count(usage, 'completion_tokens'),
      totalTokens: count(usage, 'total_tokens'),
      cacheReadTokens: count(nested(usage, 'prompt_tokens_details'), 'cached_tokens'),
      reasoningTokens: count(nested(usage, 'completion_tokens_details'), 'reasoning_tokens'),
    });
  }
  const cacheRead = count(usage, 'input_cached_tokens', 'cache_read_input_tokens', 'input_cache_read', 'cached_tokens');
  const cacheWrite = count(usage, 'cache_creation_input_tokens', 'input_cache_creation', 'input_cache_write');
  const reasoning = count(usage, 'output_reasoning_tokens', 'output_reasoning', 'reasoning_tokens');
  const input = count(usage, 'input', 'input_tokens');
  const output = count(usage, 'output', 'output_tokens');
  return defined({
    inputTokens: input === undefined ? undefined : input + (cacheRead ?? 0) + (cacheWrite ?? 0),
    outputTokens: output === undefined ? undefined : output + (reasoning ?? 0),
    totalTokens: count(usage, 'total', 'total_tokens'),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    reasoningTokens: reasoning,
  });
}

function readCost(value: unknown): MetricFields | undefined {
  const cost = parseMaybeJson(value);
  if (!isRecord(cost)) return undefined;
  const total = count(cost, 'total');
  if (total !== undefined) return { costUsd: total };
  const parts = Object.values(cost)
    .map(asNumber)
    .filter((n): n is number => n !== undefined && n >= 0);
  return parts.length > 0 ? { costUsd: parts.reduce((a, b) => a + b, 0) } : undefined;
}

function providerFromModel(value: unknown): MetricFields | undefined {
  const model = asString(value);
  const provider = model ? providerOfModel(model) : undefined;
  return provider ? { provider } : undefined;
}

const isGeneration = (attrs: Attrs) => {
  const type = attrs['langfuse.observation.type'];
  return type === 'generation' || type === 'embedding';
};

const looksLikeMessage = (m: unknown) => isRecord(m) && typeof m.role === 'string';

/**
 * An observation's input or output: chat messages (a list, one message, or `{messages, ...}`
 * whose other keys, such as the tools offered, go to `raw`), a generation's plain text answer
 * as an assistant message, anything else as text.
 */
function observationIO(value: unknown, side: 'input' | 'output', generation: boolean): SpanIO {
  const parsed = parseMaybeJson(value);
  if (Array.isArray(parsed) && parsed.length > 0 && parsed.every(looksLikeMessage))
    return toSpanIO(convertOpenAiMessages(parsed), 'langfuse');
  if (looksLikeMessage(parsed)) return toSpanIO(convertOpenAiMessages(parsed, emptyConversion(), 'assistant'), 'langfuse');
  if (isRecord(parsed) && Array.isArray(parsed.messages)) {
    const io = toSpanIO(convertOpenAiMessages(parsed.messages), 'langfuse');
    const { messages: _messages, ...rest } = parsed;
    if (Object.keys(rest).length > 0) io.raw = { ...(isRecord(io.raw) ? io.raw : {}), ...rest };
    return io;
  }
  if (typeof parsed === 'string' && generation && side === 'output') return { messages: [{ role: 'assistant', content: parsed }] };
  return { text: typeof parsed === 'string' ? parsed : JSON.stringify(parsed) };
}

const ioRow = (key: string, side: 'input' | 'output'): IORow => ({
  id: key,
  keys: [key],
  read: (attrs) => ({ [side]: observationIO(attrs[key], side, isGeneration(attrs)), consumed: [key] }),
});

export const langfuse = {
  kinds: [
    typed('generation', 'llm.chat'),
    typed('embedding', 'llm.embedding'),
    typed('agent', 'agent'),
    typed('tool', 'tool'),
    typed('chain', 'chain'),
    typed('retriever', 'retrieval'),
    typed('guardrail', 'guardrail'),
    typed('evaluator', 'custom'),
  ] satisfies KindRow[],
  fields: [
    { field: 'model', key: 'langfuse.observation.model.name' },
    { field: 'inputTokens', key: 'langfuse.observation.usage_details', read: readUsageDetails },
    { field: 'costUsd', key: 'langfuse.observation.cost_details', read: readCost },
    { field: 'ttftMs', key: 'langfuse.observation.completion_start_time', read: readCompletionStart },
    { field: 'promptName', key: 'langfuse.observation.prompt.name' },
    { field: 'promptVersion', key: 'langfuse.observation.prompt.version' },
  ] satisfies FieldRow[],
  /**
   * Below every other convention's rows: an observation names its model but never its provider,
   * which is then the model's family (cost/provider.ts), so it groups and prices like the others.
   */
  fallbackFields: [{ field: 'provider', key: 'langfuse.observation.model.name', read: providerFromModel }] satisfies FieldRow[],
  traceFields: [
    { field: 'name', key: 'langfuse.trace.name' },
    { field: 'environment', key: 'langfuse.environment' },
    { field: 'sessionId', key: 'langfuse.session.id' },
    { field: 'userId', key: 'langfuse.user.id' },
    { field: 'tags', key: 'langfuse.trace.tags' },
  ] satisfies TraceFieldRow[],
  io: [ioRow('langfuse.observation.input', 'input'), ioRow('langfuse.observation.output', 'output')] satisfies IORow[],
  /** An observation of level ERROR failed, whatever its OTLP status; `status_message` says why. */
  status: [{ key: 'langfuse.observation.level', value: 'ERROR', messageKey: 'langfuse.observation.status_message' }] satisfies StatusRow[],
};
