import type { PlainAnyValue, PlainExportRequest, PlainInt64, PlainKeyValue, PlainLogsRequest } from '../wire/model.js';
import { parseUnixNanos, toHexId, unixNanosToIso } from '../mapping/normalize.js';

/**
 * The GenAI semantic conventions' evaluation event (`gen_ai.evaluation.result` as a span event,
 * or as a log record carrying the span's trace and span ids:
 * `gen_ai.evaluation.name`, `.score.value`, `.score.label`, `.explanation`) as score inputs on
 * that span, source `otel`, for the scores feature to validate and store (app.ts wires it). A
 * number makes a numeric score (its label kept in metadata), a label alone a categorical one.
 * The id is made from the span, the name and the event's time, so a re-sent export corrects the
 * score instead of adding one.
 */

export const evaluationEventName = 'gen_ai.evaluation.result';
const eventName = evaluationEventName;

/** Whether a log record is an evaluation event: its event name, or the `event.name` attribute older SDKs use. */
export function isEvaluationRecord(eventNameOfRecord: string | undefined, attributes: PlainKeyValue[] | undefined): boolean {
  if (eventNameOfRecord) return eventNameOfRecord === eventName;
  return (attributes ?? []).some((kv) => kv.key === 'event.name' && kv.value?.stringValue === eventName);
}

/** One evaluation's score input on its span. */
function evaluationScore(traceId: string, spanId: string, kvs: PlainKeyValue[] | undefined, timeUnixNano: PlainInt64 | undefined) {
  const attributes = new Map((kvs ?? []).map((kv) => [kv.key, scalar(kv.value)]));
  const name = attributes.get('gen_ai.evaluation.name');
  const value = attributes.get('gen_ai.evaluation.score.value');
  const label = attributes.get('gen_ai.evaluation.score.label');
  const explanation = attributes.get('gen_ai.evaluation.explanation');
  const time = parseUnixNanos(timeUnixNano);
  const numeric = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : undefined;
  return {
    id: `otel-${traceId}-${spanId}-${String(name)}-${String(timeUnixNano ?? '')}`.slice(0, 128),
    name,
    ...(numeric !== undefined && Number.isFinite(numeric)
      ? { value: numeric, dataType: 'numeric', ...(typeof label === 'string' && { metadata: { label } }) }
      : { value: label, dataType: 'categorical' }),
    ...(typeof explanation === 'string' && { comment: explanation }),
    ...(time !== undefined && { timestamp: unixNanosToIso(time) }),
    traceId,
    spanId,
    source: 'otel',
  };
}

/** The evaluation events among a logs request's records (those naming a span), as score inputs. */
export function evaluationScoresOfLogs(request: PlainLogsRequest): Record<string, unknown>[] {
  const scores: Record<string, unknown>[] = [];
  for (const resourceLogs of request.resourceLogs ?? []) {
    for (const scopeLogs of resourceLogs.scopeLogs ?? []) {
      for (const record of scopeLogs.logRecords ?? []) {
        if (!isEvaluationRecord(record.eventName, record.attributes)) continue;
        const traceId = toHexId(record.traceId, 16);
        const spanId = toHexId(record.spanId, 8);
        if (!traceId || !spanId) continue;
        scores.push(evaluationScore(traceId, spanId, record.attributes, record.timeUnixNano ?? record.observedTimeUnixNano));
      }
    }
  }
  return scores;
}

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
          scores.push(evaluationScore(traceId, spanId, event.attributes, event.timeUnixNano));
        }
      }
    }
  }
  return scores;
}
