/**
 * A span's token counts as the price tables read them. OpenTelemetry's rule: input tokens
 * include the cached ones (reads and writes), output tokens include reasoning. A span that
 * breaks the rule (cache reads and writes above its input, as Anthropic's own API reports
 * them; reasoning above its output, as Gemini's does) sent the parts beside each other: the
 * total is then their sum. Without input tokens, total minus output is the input (embeddings
 * often send a total only).
 */
export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

export interface UsageFields {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  totalTokens?: number | undefined;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
  reasoningTokens?: number | undefined;
}

/** The usage to price, or null when the span sent no token count at all. */
export function tokenUsage(span: UsageFields): TokenUsage | null {
  if (span.inputTokens === undefined && span.outputTokens === undefined && span.totalTokens === undefined) return null;
  const cacheRead = span.cacheReadTokens ?? 0;
  const cacheWrite = span.cacheWriteTokens ?? 0;
  const reasoning = span.reasoningTokens ?? 0;
  let input = span.inputTokens ?? Math.max(0, (span.totalTokens ?? 0) - (span.outputTokens ?? 0));
  let output = span.outputTokens ?? 0;
  if (cacheRead + cacheWrite > input) input += cacheRead + cacheWrite;
  if (reasoning > output) output += reasoning;
  return { input, output, cacheRead, cacheWrite, reasoning };
}
