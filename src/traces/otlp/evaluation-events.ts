import type { PlainAnyValue, PlainExportRequest } from './model.js';
import { parseUnixNanos, toHexId, unixNanosToIso } from './normalize.js';

/**
 * The GenAI semantic conventions' evaluation event (`gen_ai.evaluation.result` on a span:
 * `gen_ai.evaluation.name`, `.score.value`, `.score.label`, `.explanation`) as score inputs on
 * that span, source `otel`, for the scores feature to validate and store (app.ts wires it). A
 * number makes a numeric score (its label kept in metadata), a label alone a categorical one.
 * The id is made from the span, the name and the event's time, so a re-sent export corrects the
 * score instead of adding one.
 */

const eventName = 'gen_ai.evaluation.result';

function scalar(value: PlainAnyValue | undefined): string | number | boolean | undefined {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return Number(value.doubleValue);
  if (value.intValue !== undefined) return Number(value.intValue);
  return undefined;
}

export function evaluationScoresOf(request: PlainExportRequest): Record<string, unknown>[] {
  const scores: Record<string, unknown>[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        const traceId = toHexId(span.traceId, 16);
        const spanId = toHexId(span.spanId, 8);
        if (!traceId || !spanId) continue;
        for (const event of span.events ?? []) {
          if (event.name !== eventName) continue;
          const attributes = new Map((event.attributes ?? []).map((kv) => [kv.key, scalar(kv.value)]));
          const name = attributes.get('gen_ai.evaluation.name');
          const value = attributes.get('gen_ai.evaluation.score.value');
          const label = attributes.get('gen_ai.evaluation.score.label');
          const explanation = attributes.get('gen_ai.evaluation.explanation');
          const time = parseUnixNanos(event.timeUnixNano);
          const numeric = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : undefined;
          scores.push({
            id: `otel-${traceId}-${spanId}-${String(name)}-${String(event.timeUnixNano ?? '')}`.slice(0, 128),
            name,
            ...(numeric !== undefined && Number.isFinite(numeric)
              ? { value: numeric, dataType: 'numeric', ...(typeof label === 'string' && { metadata: { label } }) }
              : { value: label, dataType: 'categorical' }),
            ...(typeof explanation === 'string' && { comment: explanation }),
            ...(time !== undefined && { timestamp: unixNanosToIso(time) }),
            traceId,
            spanId,
            source: 'otel',
          });
        }
      }
    }
  }
  return scores;
}
