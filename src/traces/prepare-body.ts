import { firstIssuePerPath, issuePath } from '../http/errors.js';
import { repairLoneSurrogates } from '../http/json-bounds.js';
import { toSpanRows, type SpanRow } from './rows.js';
import type { SpanCost } from './cost/pricing.js';
import type { Span } from './span-schemas.js';
import { batchIngestBodySchema, ingestBodySchema, limits, traceSchema, type IngestResult, type Trace } from './schemas.js';

/**
 * One trace of a body, validated on its own: the trace as parsed, or undefined with its issues
 * added to `errors` by index, traceId and path. Text no UTF-8 store can hold (a lone surrogate)
 * is repaired to U+FFFD, never stored as is.
 */
export function checkTrace(candidate: unknown, index: number, errors: IngestResult['errors']): Trace | undefined {
  const parsed = traceSchema.safeParse(repairLoneSurrogates(candidate));
  if (parsed.success) return parsed.data;
  const traceId =
    typeof (candidate as { traceId?: unknown } | null)?.traceId === 'string' ? (candidate as { traceId: string }).traceId : null;
  for (const issue of firstIssuePerPath(parsed.error.issues).slice(0, limits.issuesPerTrace)) {
    errors.push({ index, traceId, path: issuePath(`traces.${index}`, issue.path), message: issue.message });
  }
  return undefined;
}

/** Which native ingest body: POST /api/traces, or POST /api/traces/batch (at most 100 traces). */
export type IngestBodyShape = 'traces' | 'batch';

/**
 * A native ingest body made ready to store: the answer to send, the span rows of its valid
 * traces with their JSONEachRow lines, and the traces they touch. `unparsed` when the body is
 * anything but well-formed JSON of the right outer shape: the service's thread then parses it
 * as fastify does, and answers with the same error it always did.
 */
export type PreparedBody =
  { kind: 'prepared'; result: IngestResult; rows: SpanRow[]; texts: string[]; traceIds: string[] } | { kind: 'unparsed' };

const unparsed: PreparedBody = { kind: 'unparsed' };

/**
 * Parses, validates and makes rows of a native ingest body's text, as the routes' parsing,
 * body schema, `checkTrace` and `toSpanRows` do on the service's thread, in one synchronous
 * step (the ingest thread's, ingest-thread.ts). A text naming `__proto__` or `constructor`
 * is left to fastify's parser, which refuses prototype poisoning.
 */
export function prepareBody(
  text: string,
  shape: IngestBodyShape,
  workspaceId: string,
  price: ((span: Span) => SpanCost) | undefined,
): PreparedBody {
  if (text.includes('__proto__') || text.includes('constructor')) return unparsed;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return unparsed;
  }
  const outer = (shape === 'batch' ? batchIngestBodySchema : ingestBodySchema).safeParse(body);
  if (!outer.success) return unparsed;
  const valid: Trace[] = [];
  const errors: IngestResult['errors'] = [];
  outer.data.traces.forEach((candidate, index) => {
    const trace = checkTrace(candidate, index, errors);
    if (trace) valid.push(trace);
  });
  const rows = toSpanRows(workspaceId, valid, price);
  return {
    kind: 'prepared',
    result: { accepted: valid.length, rejected: outer.data.traces.length - valid.length, errors },
    rows,
    texts: rows.map((row) => JSON.stringify(row)),
    traceIds: [...new Set(valid.map((t) => t.traceId))],
  };
}
