import type { FastifyBaseLogger } from 'fastify';
import { storeUnavailable } from '../../writer/write-errors.js';
import type { TraceIngest } from '../ingest.js';
import { summarizeRejections } from './export.js';
import { evaluationScoresOfLogs } from './logs/evaluation-events.js';
import { normalizeLogs, storeLogRecords } from './logs/log-records.js';
import type { PlainLogsRequest } from './wire/model.js';
import type { SpanRejection } from './mapping/normalize.js';

export interface LogsExportResult {
  /** Records stored. */
  accepted: number;
  /** Records turned away (no span named, not a GenAI content event nor an evaluation), each with a reason. */
  rejected: number;
  /** Spans already stored that the records filled. */
  spansUpdated: number;
  /** The first few rejections. */
  errors: SpanRejection[];
  /** One line for ExportLogsPartialSuccess.error_message; empty when nothing was rejected. */
  errorMessage: string;
}

const listedErrors = 50;

/**
 * An OTLP logs export, whatever carried it (OTLP/HTTP in api/otlp-routes.ts, OTLP/gRPC in api/grpc/): the
 * GenAI content records stored and attached to their spans (log-records.ts), evaluation events
 * handed to `recordScores` as scores on their spans (evaluation-events.ts), the others counted.
 */
export async function exportLogs(
  ingest: TraceIngest,
  workspaceId: string,
  request: PlainLogsRequest,
  log: FastifyBaseLogger,
  recordScores?: (scores: Record<string, unknown>[]) => Promise<void>,
): Promise<LogsExportResult> {
  const logs = normalizeLogs(request, { evaluationsTaken: recordScores !== undefined });
  let spansUpdated: number;
  try {
    spansUpdated = await storeLogRecords(ingest, workspaceId, logs);
  } catch (error) {
    log.error({ err: error }, 'OTLP log records could not be stored');
    throw storeUnavailable();
  }
  const evaluations = recordScores ? evaluationScoresOfLogs(request) : [];
  if (evaluations.length > 0) await recordScores?.(evaluations);
  const rejected = logs.rejections.length;
  return {
    accepted: logs.recordCount - rejected,
    rejected,
    spansUpdated,
    errors: logs.rejections.slice(0, listedErrors),
    errorMessage: summarizeRejections(logs.rejections, logs.recordCount, 'log records'),
  };
}
