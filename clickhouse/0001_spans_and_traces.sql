-- Spans: one row per (workspace, trace, span) once deduplicated. Sorting and sharding keys
-- hold identity only, so a re-sent span always lands on the row it replaces.
-- `version` orders re-sends (the newest wins); `is_deleted = 1` rows are tombstones written
-- by DELETE /api/traces/:id. Read with FINAL (bounded by the primary key) or through the
-- deduplicating views of a later migration.
CREATE TABLE IF NOT EXISTS spans {{on_cluster}} (
  workspace_id LowCardinality(String),
  trace_id String,
  span_id String,
  parent_span_id String,                      -- '' for a root span
  name String,
  kind LowCardinality(String),                -- one of the 15 SpanKind values
  status LowCardinality(String),              -- ok | error | unset
  status_message String,
  start_time DateTime64(6, 'UTC'),
  end_time DateTime64(6, 'UTC'),
  duration_ms Float64,
  model LowCardinality(String),               -- '' when not sent
  provider LowCardinality(String),            -- '' when not sent
  input_tokens Nullable(Float64),             -- NULL when not sent
  output_tokens Nullable(Float64),
  total_tokens Nullable(Float64),
  cost_usd Nullable(Float64),
  input String CODEC(ZSTD(3)),                -- SpanIO as JSON text; '' when not sent
  output String CODEC(ZSTD(3)),
  attributes String CODEC(ZSTD(3)),           -- JSON object text; '' when not sent
  events String CODEC(ZSTD(3)),               -- JSON array text; '' when not sent
  metadata String CODEC(ZSTD(3)),             -- JSON object text; '' when not sent
  -- Trace-level fields copied onto every span, so span queries never join traces.
  trace_name String,
  session_id String,
  source LowCardinality(String),
  environment LowCardinality(String),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, trace_id, span_id)
{{ttl:toDateTime(start_time)}}
{{shard:sipHash64(trace_id)}}
-- Small granules: recomputing a hundred traces with random ids reads one granule per trace
-- per part, so read cost scales with the granule size, not with the table.
-- Small compression blocks: reading one trace's spans decompresses a few 64 KiB blocks of the
-- large input/output columns instead of up to 1 MiB blocks of neighbouring traces.
SETTINGS index_granularity = 1024, min_compress_block_size = 16384, max_compress_block_size = 65536;

-- Traces: one summary row per (workspace, trace), recomputed inside ClickHouse from the
-- trace's deduplicated spans after every ingest that touches it. Lists and filters read
-- this narrow table only.
CREATE TABLE IF NOT EXISTS traces {{on_cluster}} (
  workspace_id LowCardinality(String),
  trace_id String,
  name String,
  session_id String,
  source LowCardinality(String),
  environment LowCardinality(String),
  status LowCardinality(String),              -- running | completed | error
  trace_kind LowCardinality(String),          -- kind of the root span; '' while running
  start_time DateTime64(6, 'UTC'),            -- earliest span start
  end_time Nullable(DateTime64(6, 'UTC')),    -- root span end; NULL while running
  duration_ms Nullable(Float64),              -- root span duration; NULL while running
  model LowCardinality(String),               -- of the LLM span with most tokens
  provider LowCardinality(String),
  input_tokens Nullable(Float64),             -- sums as DESIGN.md defines; NULL when no span sent any
  output_tokens Nullable(Float64),
  total_tokens Nullable(Float64),
  cost_usd Nullable(Float64),
  span_count UInt32,
  error_count UInt32,
  -- The trace's live spans grouped per model, per provider and per kind, usage counted by the
  -- same rule as the sums above: the span-level stats and cost breakdown sum these, one row
  -- per trace, instead of grouping every span at query time.
  by_model Array(Tuple(key LowCardinality(String), spans UInt32, errors UInt32, input_tokens Float64,
    output_tokens Float64, total_tokens Float64, cost_usd Float64, durations Array(Float64))) DEFAULT [],
  by_provider Array(Tuple(key LowCardinality(String), spans UInt32, errors UInt32, input_tokens Float64,
    output_tokens Float64, total_tokens Float64, cost_usd Float64, durations Array(Float64))) DEFAULT [],
  by_kind Array(Tuple(key LowCardinality(String), spans UInt32, errors UInt32, input_tokens Float64,
    output_tokens Float64, total_tokens Float64, cost_usd Float64, durations Array(Float64))) DEFAULT [],
  version UInt64,
  is_deleted UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, trace_id)
{{ttl:toDateTime(start_time)}}
{{shard:sipHash64(trace_id)}}
SETTINGS index_granularity = 1024;
