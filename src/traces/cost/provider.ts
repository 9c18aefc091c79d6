/**
 * Provider names as instrumentations send them, to the provider ids of the built-in price
 * table (@pydantic/genai-prices). Names arrive in three forms: OpenTelemetry's
 * `gen_ai.provider.name` values (`azure.ai.openai`, `gcp.vertex_ai`, `aws.bedrock`), the
 * Vercel AI SDK's `<provider>.<api>` (`openai.chat`, `anthropic.messages`,
 * `azure-openai.chat`), and plain names (OpenInference `llm.provider`, native spans).
 *
 * Rule: lower-case and trim; a name of the alias table maps to its id; otherwise the part
 * before the first dot is looked up the same way, or kept as it is. The README (Cost and
 * prices) shows the table.
 */
export const providerAliases: Readonly<Record<string, string>> = {
  'azure.ai.openai': 'azure',
  'az.ai.openai': 'azure',
  'az.ai.inference': 'azure',
  'azure.openai': 'azure',
  'azure.ai.inference': 'azure',
  'azure-openai': 'azure',
  azure_openai: 'azure',
  'aws.bedrock': 'aws',
  'amazon-bedrock': 'aws',
  bedrock: 'aws',
  'gcp.gemini': 'google',
  'gcp.gen_ai': 'google',
  'gcp.vertex_ai': 'google',
  gcp: 'google',
  gemini: 'google',
  vertex: 'google',
  vertexai: 'google',
  vertex_ai: 'google',
  'google-vertex': 'google',
  'google.vertex': 'google',
  'google.generative-ai': 'google',
  'google-generative-ai': 'google',
  mistral_ai: 'mistral',
  mistralai: 'mistral',
  x_ai: 'x-ai',
  xai: 'x-ai',
  grok: 'x-ai',
  together_ai: 'together',
  togetherai: 'together',
  fireworks_ai: 'fireworks',
  'fireworks-ai': 'fireworks',
  moonshot: 'moonshotai',
  'ibm.watsonx.ai': 'ibm',
};

/** Names seen before (a few dozen in practice), so each is worked out once. */
const seen = new Map<string, string>();

/**
 * The one spelling of a provider, used everywhere a span's provider is stored (the OTLP
 * mapping), grouped (stats) and priced: the price table's provider id.
 */
export function normalizeProvider(name: string): string {
  const known = seen.get(name);
  if (known !== undefined) return known;
  const lower = name.trim().toLowerCase();
  const dot = lower.indexOf('.');
  const head = dot > 0 ? lower.slice(0, dot) : lower;
  const normalized = providerAliases[lower] ?? providerAliases[head] ?? (head || lower);
  if (seen.size < 1000) seen.set(name, normalized);
  return normalized;
}
