/**
 * Provider names as instrumentations send them, to the provider ids of the built-in price
 * table (@pydantic/genai-prices). Names arrive in three forms: OpenTelemetry's
 * `gen_ai.provider.name` values (`azure.ai.openai`, `gcp.vertex_ai`, `aws.bedrock`), the
 * Vercel AI SDK's `<provider>.<api>` (`openai.chat`, `anthropic.messages`,
 * `azure-openai.chat`), and plain names (OpenInference `llm.provider`, native spans).
 *
 * Rule: lower-case and trim; a name of the alias table maps to its id; otherwise the part
 * before the first dot is looked up the same way, or kept as it is. docs/api.md (Cost and
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

/** A table's own entry (never an Object.prototype member: a provider named `constructor` is no alias). */
const entry = (table: Readonly<Record<string, string>>, key: string) => (Object.hasOwn(table, key) ? table[key] : undefined);

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
  const normalized = entry(providerAliases, lower) ?? entry(providerAliases, head) ?? (head || lower);
  if (seen.size < 1000) seen.set(name, normalized);
  return normalized;
}

/**
 * Model families of the providers of the price table, for spans that name a model but no
 * provider (the Langfuse SDKs send `langfuse.observation.model.name` only). A model belongs
 * to a family when its name, after any `vendor/` prefix and lower-cased, is the family name or
 * starts with it and a dash (`gpt-4o-mini-2024-07-18` is `gpt`, `o3-mini` is `o3`). docs/api.md
 * (Cost and prices) shows the table.
 */
export const modelFamilies: Readonly<Record<string, string>> = {
  gpt: 'openai',
  chatgpt: 'openai',
  o1: 'openai',
  o3: 'openai',
  o4: 'openai',
  'text-embedding-3': 'openai',
  'text-embedding-ada': 'openai',
  'dall-e': 'openai',
  whisper: 'openai',
  tts: 'openai',
  'omni-moderation': 'openai',
  claude: 'anthropic',
  gemini: 'google',
  gemma: 'google',
  mistral: 'mistral',
  'open-mistral': 'mistral',
  mixtral: 'mistral',
  codestral: 'mistral',
  ministral: 'mistral',
  pixtral: 'mistral',
  magistral: 'mistral',
  devstral: 'mistral',
  command: 'cohere',
  'embed-english': 'cohere',
  'embed-multilingual': 'cohere',
  grok: 'x-ai',
  deepseek: 'deepseek',
};

/** The provider of a model's family (modelFamilies), or undefined for a name of no known family. */
export function providerOfModel(model: string): string | undefined {
  const name = model
    .slice(model.lastIndexOf('/') + 1)
    .trim()
    .toLowerCase();
  for (let dash = name.indexOf('-'); ; dash = name.indexOf('-', dash + 1)) {
    const family = entry(modelFamilies, dash === -1 ? name : name.slice(0, dash));
    if (family !== undefined) return family;
    if (dash === -1) return undefined;
  }
}
