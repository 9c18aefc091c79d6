import { firstIssuePerPath, issuePath } from '../../http/wire/errors.js';
import { repairLoneSurrogates } from '../../http/wire/json-bounds.js';
import { Turns } from '../../http/server/turns.js';
import { spanPricerFor, type IngestPricing } from '../cost/pricing.js';
import { toSpanRows } from './rows.js';
import { type SpanRow } from '../tables/span-rows.js';
import type { WriteBatcher } from '../writer/write-batcher.js';
import type { IngestActivity } from '../../contract/ingest-activity.js';
import { limits, traceSchema, type IngestResult, type Trace } from '../model/schemas.js';

/**
 * What storing traces takes, made once per app (src/app.ts) and handed to the native and OTLP
 * routes and the gRPC server: the writer, the pricing of generation spans without a cost
 * (cost/pricing.ts), and the thread's ingest turns (http/server/turns.ts), which parsing, validation
 * and the making of rows take one step at a time so reads go in between.
 */
export interface TraceIngest {
  writer: WriteBatcher;
  pricing: IngestPricing;
  turns: Turns;
  /**
   * Hears every request stored through this ingest: the app's external ingest notes it (what
   * the evaluators' worker yields to); the judges' own traces go through a copy without it.
   */
  activity?: IngestActivity;
}

/** The ingest of an app; without pricing given, generation spans are priced by the built-in table. */
export function traceIngestOf(
  writer: WriteBatcher,
  pricing: IngestPricing = { enabled: true },
  turns = new Turns(),
  activity?: IngestActivity,
): TraceIngest {
  return { writer, pricing, turns, ...(activity && { activity }) };
}

/**
 * Validates every trace on its own: valid ones are stored, invalid ones are reported by
 * index, traceId and path, never dropped silently. The OTLP bridge calls this too, with the
 * native traces it normalized.
 */
export async function ingestTraces(ingest: TraceIngest, workspaceId: string, traces: unknown[]): Promise<IngestResult> {
  const valid: Trace[] = [];
  const errors: IngestResult['errors'] = [];
  // Validated in the thread's ingest turns (http/server/turns.ts), a body of many traces over several.
  await ingest.turns.take();
  for (const [index, candidate] of traces.entries()) {
    await ingest.turns.pause();
    // Text no UTF-8 store can hold (a lone surrogate) is repaired to U+FFFD, never stored as is.
    const parsed = traceSchema.safeParse(repairLoneSurrogates(candidate));
    if (parsed.success) {
      valid.push(parsed.data);
      continue;
    }
    const traceId =
      typeof (candidate as { traceId?: unknown } | null)?.traceId === 'string' ? (candidate as { traceId: string }).traceId : null;
    for (const issue of firstIssuePerPath(parsed.error.issues).slice(0, limits.issuesPerTrace)) {
      errors.push({ index, traceId, path: issuePath(`traces.${index}`, issue.path), message: issue.message });
    }
  }
  await storeTraces(ingest, workspaceId, valid);
  return { accepted: valid.length, rejected: traces.length - valid.length, errors };
}

/**
 * Stores already-validated traces: their spans inserted, then the touched summaries recomputed
 * inside the engine, together with the writes of concurrent requests (write-batcher.ts).
 * Re-sent spans replace earlier ones (a newer version of the same key); a trace may arrive
 * over many calls. Generation spans without a cost are priced on the way (cost/pricing.ts).
 * Resolves once the traces are readable.
 */
export async function storeTraces({ writer, pricing, turns, activity }: TraceIngest, workspaceId: string, traces: Trace[]): Promise<void> {
  if (traces.length === 0) return;
  const ended = activity?.begin();
  try {
    const price = await spanPricerFor(pricing, workspaceId);
    // Rows a trace at a time, in the thread's ingest turns like the validation before them.
    const rows: SpanRow[] = [];
    for (const trace of traces) {
      await turns.pause();
      for (const row of toSpanRows(workspaceId, [trace], price)) rows.push(row);
    }
    await writer.write(workspaceId, rows, [...new Set(traces.map((t) => t.traceId))]);
  } finally {
    ended?.();
  }
}
