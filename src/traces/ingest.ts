import type { FastifyRequest } from 'fastify';
import { ingestTurns } from '../http/turns.js';
import { spanPricerFor, spanPricesFor } from './cost/pricing.js';
import { ingestThread } from './ingest-thread.js';
import { toSpanRows, type SpanRow } from './rows.js';
import type { WriteBatcher } from './write-batcher.js';
import { checkTrace, type IngestBodyShape, type PreparedBody } from './prepare-body.js';
import type { IngestResult, Trace } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on the native ingest routes: their JSON bodies are prepared on the ingest thread (`prepareOnThread`). */
    ingestBody?: IngestBodyShape;
  }
}

/** Bodies the ingest thread prepared, by request, for the handler (`ingestRequest`). */
const preparedBodies = new WeakMap<FastifyRequest, Extract<PreparedBody, { kind: 'prepared' }>>();

/**
 * Has the ingest thread (ingest-thread.ts) parse, validate and make the rows of a native
 * body's text, in place of fastify's parser: true once it did, for the handler to store.
 * False when the thread is not ready, or the body is not JSON of the right outer shape: the
 * caller then parses it as usual, and the handler validates it on the service's thread.
 */
export async function prepareOnThread(
  writer: WriteBatcher,
  request: FastifyRequest,
  text: string,
  shape: IngestBodyShape,
): Promise<boolean> {
  const workspaceId = request.auth.workspaceId;
  let prices;
  try {
    prices = await spanPricesFor(writer.clickhouse, workspaceId);
  } catch {
    // The prices could not be read: the service thread's path reads them again and answers the error.
    return false;
  }
  const prepared = await ingestThread.prepare(text, shape, workspaceId, prices);
  if (prepared) preparedBodies.set(request, prepared);
  return prepared !== undefined;
}

/** A native ingest request: its body as the ingest thread prepared it, else validated here (`ingestTraces`). */
export async function ingestRequest(writer: WriteBatcher, request: FastifyRequest, traces: unknown[]): Promise<IngestResult> {
  const prepared = preparedBodies.get(request);
  if (!prepared) return ingestTraces(writer, request.auth.workspaceId, traces);
  if (prepared.rows.length > 0) await writer.write(request.auth.workspaceId, prepared.rows, prepared.traceIds, prepared.texts);
  return prepared.result;
}

/**
 * Validates every trace on its own: valid ones are stored, invalid ones are reported by
 * index, traceId and path, never dropped silently. The OTLP bridge calls this too, with the
 * native traces it normalized.
 */
export async function ingestTraces(writer: WriteBatcher, workspaceId: string, traces: unknown[]): Promise<IngestResult> {
  const valid: Trace[] = [];
  const errors: IngestResult['errors'] = [];
  // Validated in the thread's ingest turns (http/turns.ts), a body of many traces over several.
  await ingestTurns.take();
  for (const [index, candidate] of traces.entries()) {
    await ingestTurns.pause();
    const trace = checkTrace(candidate, index, errors);
    if (trace) valid.push(trace);
  }
  await storeTraces(writer, workspaceId, valid);
  return { accepted: valid.length, rejected: traces.length - valid.length, errors };
}

/**
 * Stores already-validated traces: their spans inserted, then the touched summaries recomputed
 * inside the engine, together with the writes of concurrent requests (write-batcher.ts).
 * Re-sent spans replace earlier ones (a newer version of the same key); a trace may arrive
 * over many calls. Generation spans without a cost are priced on the way (cost/pricing.ts).
 * Resolves once the traces are readable.
 */
export async function storeTraces(writer: WriteBatcher, workspaceId: string, traces: Trace[]): Promise<void> {
  if (traces.length === 0) return;
  const price = await spanPricerFor(writer.clickhouse, workspaceId);
  // Rows a trace at a time, in the thread's ingest turns like the validation before them.
  const rows: SpanRow[] = [];
  for (const trace of traces) {
    await ingestTurns.pause();
    for (const row of toSpanRows(workspaceId, [trace], price)) rows.push(row);
  }
  await writer.write(workspaceId, rows, [...new Set(traces.map((t) => t.traceId))]);
}
