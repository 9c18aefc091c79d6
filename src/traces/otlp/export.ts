import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../http/errors.js';
import { storeTraces } from '../ingest.js';
import { limits, spanSchema, tagSchema, traceSchema, type Span, type Trace } from '../schemas.js';
import { attachStoredContent } from './log-records.js';
import type { WriteBatcher } from '../write-batcher.js';
import { repairLoneSurrogates } from '../../http/json-bounds.js';
import type { NativeTrace, PlainExportRequest } from './model.js';
import { normalizeExport, type SpanRejection } from './normalize.js';

export interface ExportResult {
  /** Spans stored. */
  accepted: number;
  /** Spans turned away, each with a reason (the first few are listed). */
  rejected: number;
  errors: SpanRejection[];
  /** One line for ExportTracePartialSuccess.error_message; empty when nothing was rejected. */
  errorMessage: string;
}

const listedErrors = 50;

/**
 * A small cap on exports in flight per process: past it, exporters are told to come back
 * (503 with Retry-After), which every OTLP exporter honours, instead of queueing without end.
 */
export class ExportGate {
  private inFlight = 0;
  constructor(readonly limit: number) {}
  enter() {
    if (this.inFlight >= this.limit) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Too many exports in progress; retry shortly', { inFlight: this.inFlight }, { 'retry-after': '1' });
    }
    this.inFlight++;
    let left = false;
    return () => {
      if (!left) this.inFlight--;
      left = true;
    };
  }
}

const traceFieldSchemas = {
  name: traceSchema.shape.name,
  sessionId: traceSchema.shape.sessionId,
  environment: traceSchema.shape.environment,
  service: traceSchema.shape.service,
  userId: traceSchema.shape.userId,
} as const;

const issueReason = (issues: { path: PropertyKey[]; message: string }[]) => {
  const first = issues[0]!;
  return `${first.path.map(String).join('.') || 'span'}: ${first.message}`;
};

/**
 * Validates the normalized traces once, span by span, with the native schemas. A span the
 * native schema refuses is turned away with its reason; a trace field it refuses (a session
 * or environment label the native schema cannot hold) is left out, as it stays readable in the
 * span attributes and resource. Traces longer than the per-payload span limit are stored in
 * parts (a trace may arrive over many calls).
 */
export function validateTraces(traces: NativeTrace[], rejections: SpanRejection[]): Trace[] {
  const valid: Trace[] = [];
  for (const trace of traces) {
    const fields: Partial<Trace> = {};
    for (const [field, schema] of Object.entries(traceFieldSchemas) as [keyof typeof traceFieldSchemas, (typeof traceFieldSchemas)[keyof typeof traceFieldSchemas]][]) {
      const value = trace[field];
      if (value === undefined) continue;
      const parsed = schema.safeParse(field === 'name' ? String(value).slice(0, limits.nameLength) : value);
      if (parsed.success && parsed.data !== undefined) fields[field] = parsed.data;
    }
    if (trace.tags) {
      const tags = trace.tags.filter((t) => tagSchema.safeParse(t).success).slice(0, limits.tagsPerTrace);
      if (tags.length > 0) fields.tags = tags;
    }
    const spans: Span[] = [];
    for (const span of trace.spans) {
      const parsed = spanSchema.safeParse(span);
      if (parsed.success) spans.push(parsed.data);
      else rejections.push({ traceId: trace.traceId, spanId: span.spanId, reason: issueReason(parsed.error.issues) });
    }
    for (let i = 0; i < spans.length; i += limits.spansPerTrace) {
      valid.push({ traceId: trace.traceId, source: trace.source, ...fields, spans: spans.slice(i, i + limits.spansPerTrace) });
    }
  }
  return valid;
}

/** The partialSuccess message: how many were turned away and the first distinct reasons. */
export function summarizeRejections(rejections: SpanRejection[], total: number, what: string): string {
  if (rejections.length === 0) return '';
  const reasons = [...new Set(rejections.map((r) => r.reason))];
  return `${rejections.length} of ${total} ${what} rejected: ${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; …' : ''}`;
}

/**
 * Normalizes an OTLP export to native traces, validates each span once, and stores the whole
 * request with one write (its summaries recomputed together). Generation spans whose content
 * came first on the logs signal are then given it (log-records.ts).
 */
export async function exportSpans(
  writer: WriteBatcher,
  workspaceId: string,
  request: PlainExportRequest,
  log: FastifyBaseLogger,
): Promise<ExportResult> {
  const { traces, rejections, spanCount } = normalizeExport(request);
  // Text with lone surrogates cannot be stored: repaired to U+FFFD, as the native ingest does.
  const valid = validateTraces(repairLoneSurrogates(traces), rejections);
  try {
    await storeTraces(writer, workspaceId, valid);
    await attachStoredContent(writer, workspaceId, valid);
  } catch (error) {
    if (error instanceof AppError) throw error;
    // A store that failed or is overloaded: exporters retry on 503, so nothing is lost.
    log.error({ err: error }, 'OTLP export could not be stored');
    throw new AppError('SERVICE_UNAVAILABLE', 'The trace store is unavailable; retry shortly', {}, { 'retry-after': '5' });
  }
  const rejected = rejections.length;
  return {
    accepted: spanCount - rejected,
    rejected,
    errors: rejections.slice(0, listedErrors),
    errorMessage: summarizeRejections(rejections, spanCount, 'spans'),
  };
}
