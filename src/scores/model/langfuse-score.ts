/**
 * A score as the Langfuse SDKs and API send it (`score-create` events of /api/public/ingestion,
 * the body of /api/public/scores) turned into a Loupe score to validate: observationId is the
 * span, dataType is upper case, a boolean is 0/1. Pure; the result is validated as any score.
 */
export function loupeScoreOfLangfuse(body: unknown, source: 'api' | 'sdk'): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const b = body as Record<string, unknown>;
  const dataType = typeof b.dataType === 'string' ? b.dataType.toLowerCase() : undefined;
  const pick = (key: string) => (b[key] === null ? undefined : b[key]);
  const out: Record<string, unknown> = {
    id: pick('id'),
    name: pick('name'),
    value: dataType === 'boolean' && (b.value === 0 || b.value === 1) ? b.value === 1 : pick('value'),
    dataType,
    comment: pick('comment'),
    metadata: pick('metadata'),
    environment: pick('environment'),
    timestamp: pick('timestamp'),
    traceId: pick('traceId'),
    spanId: pick('observationId'),
    sessionId: pick('sessionId'),
    source,
  };
  return Object.fromEntries(Object.entries(out).filter(([, value]) => value !== undefined));
}
