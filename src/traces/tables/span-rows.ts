import type { SpanFacts } from './summary-rows.js';

/**
 * The rows of `spans` (clickhouse/0001, 0003, 0004) as ingest makes them (ingest/rows.ts), and
 * the narrower row a write keeps until its flush. Optional fields that were not sent are stored
 * as '' (strings) or NULL (numbers); `detail` holds the span as the API returns it.
 */

export interface SpanRow {
  workspace_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  name: string;
  kind: string;
  status: string;
  status_message: string;
  start_time: string;
  end_time: string;
  duration_ms: number;
  model: string;
  provider: string;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  reasoning_tokens: number | null;
  ttft_ms: number | null;
  /** 'provided' | 'computed' | 'none', '' for a span without a cost that was not priced (cost/pricing.ts). */
  cost_source: string;
  prompt_name: string;
  prompt_version: string;
  /** The StoredSpan as JSON text (storedSpanOf). */
  detail: string;
  /** attributes and metadata as string maps (stringMapOf), for queries by key (clickhouse/0008). */
  attributes_map: Record<string, string>;
  metadata_map: Record<string, string>;
  trace_name: string;
  session_id: string;
  source: string;
  environment: string;
  service: string;
  user_id: string;
  tags: string[];
  /** UInt64 as a decimal string: it does not fit a JS number exactly. */
  version: string;
}

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
