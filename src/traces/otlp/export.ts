import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../http/errors.js';
import { ingestTraces } from '../ingest.js';
import type { WriteBatcher } from '../write-batcher.js';
import type { IngestResult } from '../schemas.js';
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
const repairRounds = 5;

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

/** `traces.3.spans.7.name` → span 7 of trace 3; `traces.3.environment` → a trace field. */
function issueTarget(path: string): { span: number } | { field: string } | undefined {
  const m = /^traces\.\d+\.(?:spans\.(\d+)(?:\.|$)|(name|sessionId|environment)(?:\.|$))/.exec(path);
  if (!m) return undefined;
  return m[1] !== undefined ? { span: Number(m[1]) } : { field: m[2]! };
}

/** A reason without the trace's index: `spans.2.name: Too small…` reads as span-relative. */
const reasonOf = (issue: IngestResult['errors'][number]) => `${issue.path.replace(/^traces\.\d+\./, '')}: ${issue.message}`;

/**
 * Normalizes an OTLP export to native traces and stores them through the native ingest path
 * (its validation, upsert and summaries). A span the native validation rejects is dropped
 * with its reason and the rest of its trace stored; an optional trace field it rejects
 * (a session or environment label the native schema cannot hold) is left out instead, as
 * it stays readable in the span metadata.
 */
export async function exportSpans(
  writer: WriteBatcher,
  workspaceId: string,
  request: PlainExportRequest,
  log: FastifyBaseLogger,
): Promise<ExportResult> {
  const { traces, rejections, spanCount } = normalizeExport(request);
  let pending: NativeTrace[] = traces;
  try {
    for (let round = 0; pending.length > 0; round++) {
      const result = await ingestTraces(writer, workspaceId, pending);
      if (result.rejected === 0) break;
      const issues = new Map<number, IngestResult['errors']>();
      for (const error of result.errors) issues.set(error.index, [...(issues.get(error.index) ?? []), error]);
      const retry: NativeTrace[] = [];
      for (const [index, traceIssues] of issues) {
        const trace = pending[index]!;
        const targets = traceIssues.map((issue) => ({ issue, target: issueTarget(issue.path) }));
        // Repair only what the issues pin down; past a few rounds, the trace is rejected whole.
        if (round >= repairRounds || targets.some((t) => t.target === undefined)) {
          const reason = reasonOf(traceIssues[0]!);
          for (const span of trace.spans) rejections.push({ traceId: trace.traceId, spanId: span.spanId, reason });
          continue;
        }
        const repaired: NativeTrace = { ...trace };
        const badSpans = new Map<number, string>();
        for (const { issue, target } of targets) {
          if (target && 'span' in target) badSpans.set(target.span, reasonOf(issue));
          else if (target) delete (repaired as unknown as Record<string, unknown>)[target.field];
        }
        repaired.spans = trace.spans.filter((span, i) => {
          const reason = badSpans.get(i);
          if (reason !== undefined) rejections.push({ traceId: trace.traceId, spanId: span.spanId, reason });
          return reason === undefined;
        });
        if (repaired.spans.length > 0) retry.push(repaired);
      }
      pending = retry;
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    // A store that failed or is overloaded: exporters retry on 503, so nothing is lost.
    log.error({ err: error }, 'OTLP export could not be stored');
    throw new AppError('SERVICE_UNAVAILABLE', 'The trace store is unavailable; retry shortly', {}, { 'retry-after': '5' });
  }
  const rejected = rejections.length;
  const reasons = [...new Set(rejections.map((r) => r.reason))];
  return {
    accepted: spanCount - rejected,
    rejected,
    errors: rejections.slice(0, listedErrors),
    errorMessage:
      rejected === 0 ? '' : `${rejected} of ${spanCount} spans rejected: ${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; …' : ''}`,
  };
}
