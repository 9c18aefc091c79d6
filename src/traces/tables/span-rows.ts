import { z } from 'zod';

/**
 * The rows of `spans` (clickhouse/0001, 0003, 0004) as ingest makes them (ingest/rows.ts), and
 * the narrower row a write keeps until its flush. Optional fields that were not sent are stored
 * as '' (strings) or NULL (numbers); `detail` holds the span as the API returns it.
 */

/** An engine UInt64 as decimal text (toString), so no digit is lost in JSON. */
export const versionText = z.string().regex(/^\d+$/);
const nullableNumber = z.number().nullable();

/**
 * The columns of one live span that the summaries (summaries/summary.ts) and the reads over
 * unapplied writes use, as the key read returns them (tables/spans-table.ts).
 */
export const spanFactsSchema = z.object({
  trace_id: z.string(),
  span_id: z.string(),
  version: versionText,
  trace_name: z.string(),
  session_id: z.string(),
  environment: z.string(),
  service: z.string(),
  user_id: z.string(),
  tags: z.array(z.string()),
  source: z.string(),
  parent_span_id: z.string(),
  status: z.string(),
  kind: z.string(),
  /** 'YYYY-MM-DD hh:mm:ss.ffffff' (UTC): fixed width, so text order is time order. */
  start_time: z.string(),
  end_time: z.string(),
  duration_ms: z.number(),
  model: z.string(),
  provider: z.string(),
  input_tokens: nullableNumber,
  output_tokens: nullableNumber,
  total_tokens: nullableNumber,
  cost_usd: nullableNumber,
  /** 'provided' | 'computed' | 'none', '' for a span without a cost that was not priced (cost/pricing.ts). */
  cost_source: z.string(),
  ttft_ms: nullableNumber,
});
export type SpanFacts = z.infer<typeof spanFactsSchema>;

/** A whole row of `spans`: the facts, and what only the insert and the reads of one span take. */
export const spanRowSchema = spanFactsSchema.extend({
  workspace_id: z.string(),
  name: z.string(),
  status_message: z.string(),
  cache_read_tokens: nullableNumber,
  cache_write_tokens: nullableNumber,
  reasoning_tokens: nullableNumber,
  prompt_name: z.string(),
  prompt_version: z.string(),
  /** The StoredSpan as JSON text (ingest/rows.ts, storedSpanOf). */
  detail: z.string(),
  /** attributes and metadata as string maps (stringMapOf), for queries by key (clickhouse/0008). */
  attributes_map: z.record(z.string(), z.string()),
  metadata_map: z.record(z.string(), z.string()),
});
export type SpanRow = z.infer<typeof spanRowSchema>;

/**
 * A span row as a write keeps it until its flush (write-batcher.ts): the columns the summaries
 * and the reads over unapplied writes use (SpanFacts) and its workspace. The rest (`detail`, the
 * attribute maps, the status message: most of a row's bytes) only the insert reads, and the
 * write's encoded lines hold it (pending-lines.ts); the row whole would be kept twice.
 */
export type PendingRow = SpanFacts & { workspace_id: string };

/** The pending row of a span row, field by field (no rest spread: one of these per span ingested). */
export function pendingRowOf(row: SpanRow): PendingRow {
  return {
    workspace_id: row.workspace_id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    version: row.version,
    trace_name: row.trace_name,
    session_id: row.session_id,
    environment: row.environment,
    service: row.service,
    user_id: row.user_id,
    tags: row.tags,
    source: row.source,
    parent_span_id: row.parent_span_id,
    status: row.status,
    kind: row.kind,
    start_time: row.start_time,
    end_time: row.end_time,
    duration_ms: row.duration_ms,
    model: row.model,
    provider: row.provider,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    total_tokens: row.total_tokens,
    cost_usd: row.cost_usd,
    cost_source: row.cost_source,
    ttft_ms: row.ttft_ms,
  };
}
