/**
 * One spelling per model provider. Instrumentations name the same provider many ways: the ai
 * SDK adds the API it used (`openai.chat`, `openai.embedding`, `anthropic.messages`,
 * `google.generative-ai`), OpenTelemetry GenAI uses `az.ai.openai`, `aws.bedrock`,
 * `gcp.vertex_ai`, OpenInference upper-cases some. Grouping by provider and pricing need one
 * name: the lower-cased product family below, or the lower-cased first segment when unknown.
 */
const aliases: Record<string, string> = {
  'az.ai.openai': 'azure',
  'az.ai.inference': 'azure',
  'azure.openai': 'azure',
  'azure-openai': 'azure',
  azure_openai: 'azure',
  'aws.bedrock': 'bedrock',
  'amazon-bedrock': 'bedrock',
  'gcp.vertex_ai': 'vertex_ai',
  'gcp.gen_ai': 'google',
  'gcp.gemini': 'google',
  'google.vertex': 'vertex_ai',
  'google-vertex': 'vertex_ai',
  vertexai: 'vertex_ai',
  'google.generative-ai': 'google',
  'google-generative-ai': 'google',
  gemini: 'google',
  'mistral_ai': 'mistral',
  mistralai: 'mistral',
  'x_ai': 'xai',
  'ibm.watsonx.ai': 'watsonx',
};

/** Names seen before (a few dozen in practice), so each is worked out once. */
const cache = new Map<string, string>();

export function normalizeProvider(name: string): string {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  const lower = name.trim().toLowerCase();
  let normalized = aliases[lower];
  if (normalized === undefined) {
    // `openai.chat` → openai; `anthropic.messages` → anthropic; a known alias wins first.
    const dot = lower.indexOf('.');
    const head = dot > 0 ? lower.slice(0, dot) : lower;
    normalized = aliases[head] ?? (head || lower);
  }
  if (cache.size < 1000) cache.set(name, normalized);
  return normalized;
}
