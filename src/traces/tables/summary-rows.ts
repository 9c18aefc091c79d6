/**
 * The rows the summary recompute reads and writes (summary.ts), beside a live span's narrow
 * columns (span-rows.ts, SpanFacts): the previous summary's trace fields, and the summary row of `traces` (clickhouse/0001 and the
 * later migrations that add its columns).
 */

/** The trace-level fields of the newest previous summary row, which payloads may have left out since. */
export interface PreviousSummary {
  trace_id: string;
  version: string;
  name: string;
  session_id: string;
  environment: string;
  service: string;
  user_id: string;
  tags: string[];
}

export interface SpanGroup {
  key: string;
  spans: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  durations: number[];
}

export interface TraceSummaryRow {
  workspace_id: string;
  trace_id: string;
  name: string;
  session_id: string;
  source: string;
  environment: string;
  service: string;
  user_id: string;
  tags: string[];
  status: string;
  trace_kind: string;
  start_time: string;
  end_time: string | null;
  duration_ms: number | null;
  model: string;
  provider: string;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  /** Parts of cost_usd by source (clickhouse/0006): sent by clients (also '' on older rows), computed from prices. */
  cost_provided: number;
  cost_computed: number;
  /** Counted generation spans that found no price. */
  unpriced_spans: number;
  span_count: number;
  error_count: number;
  item: string;
  by_model: SpanGroup[];
  by_provider: SpanGroup[];
  by_kind: SpanGroup[];
  /** Time to first token of each span that has one, with its keys (clickhouse/0005): stats and analytics TTFT. */
  ttfts: { model: string; provider: string; kind: string; ttft_ms: number }[];
  version: string;
  is_deleted: 0;
}
