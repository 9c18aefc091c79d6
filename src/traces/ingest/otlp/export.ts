import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../../http/wire/errors.js';
import { storeUnavailable } from '../../writer/write-errors.js';
import { storeTraces, type TraceIngest } from '../ingest.js';
import { attachStoredContent } from './logs/log-records.js';
import type { PlainExportRequest } from './wire/model.js';
import { validateTraces } from './mapping/validate.js';
import { normalizeExport, type SpanRejection } from './mapping/normalize.js';

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
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'Too many exports in progress; retry shortly',
        { inFlight: this.inFlight },
        { 'retry-after': '1' },
      );
    }
    this.inFlight++;
    let left = false;
    return () => {
      if (!left) this.inFlight--;
      left = true;
    };
  }
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
  ingest: TraceIngest,
  workspaceId: string,
  request: PlainExportRequest,
  log: FastifyBaseLogger,
): Promise<ExportResult> {
  // Each step a turn of its own when the one before was long (http/turns.ts).
  await ingest.turns.pause();
  const { traces, rejections, spanCount } = normalizeExport(request);
  await ingest.turns.pause();
  const valid = validateTraces(traces, rejections);
  try {
    await storeTraces(ingest, workspaceId, valid);
    await attachStoredContent(ingest, workspaceId, valid);
  } catch (error) {
    if (error instanceof AppError) throw error;
    // A store that failed or is overloaded: exporters retry on 503, so nothing is lost.
    log.error({ err: error }, 'OTLP export could not be stored');
    throw storeUnavailable();
  }
  const rejected = rejections.length;
  return {
    accepted: spanCount - rejected,
    rejected,
    errors: rejections.slice(0, listedErrors),
    errorMessage: summarizeRejections(rejections, spanCount, 'spans'),
  };
}
