-- GenAI content sent on the OTLP logs signal (the OpenTelemetry OpenAI instrumentation's
-- default: `gen_ai.user.message`, `gen_ai.choice`, ... log records naming their span by
-- trace and span id). Records are kept here whichever arrives first, the span or its records:
-- a span stored later takes its messages from here, and records stored after their span
-- rewrite that span with a newer version (docs/decisions/050-otlp-fidelity.md).
-- `record_id` is a hash of the record's time, name and body, so a re-sent record is one row.
CREATE TABLE IF NOT EXISTS genai_log_records {{on_cluster}} (
  workspace_id LowCardinality(String),
  trace_id String,
  span_id String,
  time DateTime64(9, 'UTC'),
  seq UInt32,                                  -- position in its request, for records of one time
  event_name LowCardinality(String),
  body String CODEC(ZSTD(3)),                  -- the record body (or event attributes) as JSON text
  record_id UInt64,
  version UInt64
)
ENGINE = {{engine:ReplacingMergeTree(version)}}
ORDER BY (workspace_id, trace_id, span_id, time, record_id)
{{ttl:toDateTime(time)}}
{{shard:sipHash64(trace_id)}}
SETTINGS index_granularity = 1024;

-- Time to first token per span of a trace, with the span's model, provider and kind, so stats
-- groups and analytics report TTFT percentiles from the summaries like the durations.
ALTER TABLE {{local:traces}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS ttfts Array(Tuple(model LowCardinality(String), provider LowCardinality(String), kind LowCardinality(String), ttft_ms Float64)) DEFAULT [] AFTER by_kind;

ALTER TABLE {{distributed:traces}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS ttfts Array(Tuple(model LowCardinality(String), provider LowCardinality(String), kind LowCardinality(String), ttft_ms Float64)) DEFAULT [] AFTER by_kind;

-- The view selects `*`: recreated so it carries the new column.
CREATE OR REPLACE VIEW traces_latest {{on_cluster}} AS
SELECT * EXCEPT (is_deleted) FROM traces FINAL WHERE is_deleted = 0;
