import { postJson } from '../../egress/post-json.js';
import { describeRequestError } from '../../egress/request-error.js';
import { RefusedTarget, type TargetGuard } from '../../egress/target-guard.js';
import type { ModelConnection } from '../api/schemas.js';

/** The longest answer of a provider read; past it the call fails (a judge's answer is small). */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** How much of a failed answer is kept in an error. */
const ERROR_EXCERPT_CHARS = 300;

export interface ModelCallOptions {
  /** Refuses private base URLs unless the operator allowed them (src/egress/target-guard.ts). */
  guard: TargetGuard;
  timeoutMs: number;
}

/** What one call gave: the parsed answer, or an error a retry may cure (`transient`) or not. */
export type ModelCallOutcome =
  { ok: true; statusCode: number; body: unknown } | { ok: false; transient: boolean; statusCode: number | null; error: string };

export interface ChatRequest {
  system: string;
  user: string;
  model: string;
  /** Asks for a structured answer of this JSON schema (OpenAI response_format, Anthropic forced tool). */
  answerSchema?: Record<string, unknown>;
  maxTokens?: number;
}

/** The tool an Anthropic judge is made to call: its input is the structured answer. */
export const ANSWER_TOOL = 'record_score';

/** The request a provider expects, without the key (headers carry it). */
export function providerRequest(connection: ModelConnection, request: ChatRequest): { path: string; body: Record<string, unknown> } {
  const { temperature, maxTokens } = connection.parameters;
  if (connection.provider === 'openai') {
    return {
      path: '/chat/completions',
      body: {
        model: request.model,
        messages: [
          { role: 'system', content: request.system },
          { role: 'user', content: request.user },
        ],
        ...(temperature !== undefined && { temperature }),
        ...((request.maxTokens ?? maxTokens) !== undefined && { max_tokens: request.maxTokens ?? maxTokens }),
        ...(request.answerSchema && {
          response_format: { type: 'json_schema', json_schema: { name: 'score', strict: true, schema: request.answerSchema } },
        }),
      },
    };
  }
  return {
    path: '/messages',
    body: {
      model: request.model,
      max_tokens: request.maxTokens ?? maxTokens ?? 1024,
      system: request.system,
      messages: [{ role: 'user', content: request.user }],
      ...(temperature !== undefined && { temperature }),
      ...(request.answerSchema && {
        tools: [{ name: ANSWER_TOOL, description: 'Record the score and the reasoning behind it', input_schema: request.answerSchema }],
        tool_choice: { type: 'tool', name: ANSWER_TOOL },
      }),
    },
  };
}

/** The text of a plain answer, or the structured answer, of either provider; undefined when the answer has none. */
export function answerOf(connection: ModelConnection, body: unknown, structured: boolean): unknown {
  const b = body as { choices?: { message?: { content?: unknown } }[]; content?: unknown } | null;
  if (connection.provider === 'openai') {
    const content = b?.choices?.[0]?.message?.content;
    return typeof content === 'string' ? content : undefined;
  }
  const blocks = b?.content;
  if (!Array.isArray(blocks)) return undefined;
  if (structured)
    return (blocks as { type?: string; name?: string; input?: unknown }[]).find((c) => c.type === 'tool_use' && c.name === ANSWER_TOOL)
      ?.input;
  const texts = (blocks as { type?: string; text?: unknown }[])
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text);
  return texts.length > 0 ? texts.join('') : undefined;
}

/** The tokens a provider's answer reports (OpenAI `usage.prompt_tokens`, Anthropic `usage.input_tokens`); none when it reports none. */
export function usageOf(connection: ModelConnection, body: unknown): { inputTokens?: number; outputTokens?: number } {
  const usage = (body as { usage?: Record<string, unknown> } | null)?.usage;
  if (!usage || typeof usage !== 'object') return {};
  const [inputKey, outputKey] =
    connection.provider === 'openai' ? ['prompt_tokens', 'completion_tokens'] : ['input_tokens', 'output_tokens'];
  const count = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);
  const inputTokens = count(usage[inputKey]);
  const outputTokens = count(usage[outputKey]);
  return { ...(inputTokens !== undefined && { inputTokens }), ...(outputTokens !== undefined && { outputTokens }) };
}

/** 429 (rate limited), 408 and every 5xx may pass on a later try; other statuses will not. */
export const isTransientStatus = (status: number) => status === 429 || status === 408 || status >= 500;

/**
 * One call to a connection's provider. The key travels only in the request's header and is
 * struck from any error excerpt (providers echo bits of a wrong key), so no answer, job row
 * or log line carries it.
 */
export async function callModel(
  connection: ModelConnection,
  apiKey: string,
  request: ChatRequest,
  options: ModelCallOptions,
): Promise<ModelCallOutcome> {
  const redact = (text: string) => (apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text);
  // A network failure may pass; a refusal by the guard will not.
  const failure = (error: unknown): ModelCallOutcome => ({
    ok: false,
    transient: !(error instanceof RefusedTarget),
    statusCode: null,
    error: redact(describeRequestError(error)),
  });
  const { path, body } = providerRequest(connection, request);
  const outcome = await postJson({
    url: new URL(connection.baseUrl.replace(/\/+$/, '') + path),
    body: JSON.stringify(body),
    headers: {
      ...(connection.provider === 'openai'
        ? { authorization: `Bearer ${apiKey}` }
        : { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' }),
      'user-agent': 'Loupe-Evaluators/1',
    },
    timeoutMs: options.timeoutMs,
    guard: options.guard,
    // One byte past the bound tells an answer of exactly the bound from a larger one.
    readAtMost: MAX_ANSWER_BYTES + 1,
  });
  if (!outcome.answered) return failure(outcome.error);
  const { status } = outcome;
  if (!outcome.whole && outcome.error !== undefined) return failure(outcome.error);
  if (!outcome.whole) return { ok: false, transient: false, statusCode: status, error: 'the answer is larger than 1 MiB' };
  const text = outcome.body.toString('utf8');
  if (status < 200 || status >= 300) {
    return {
      ok: false,
      transient: isTransientStatus(status),
      statusCode: status,
      error: redact(`the provider answered ${status}: ${text.slice(0, ERROR_EXCERPT_CHARS)}`),
    };
  }
  try {
    return { ok: true, statusCode: status, body: JSON.parse(text) };
  } catch {
    return { ok: false, transient: false, statusCode: status, error: 'the provider answered something other than JSON' };
  }
}
