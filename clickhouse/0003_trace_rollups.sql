-- Span-level figures per trace, for stats by model, provider and kind and the cost breakdown.
-- One row per (workspace, trace): the trace's live spans grouped per model, per provider and
-- per kind, with usage already counted by the rule of the trace summaries (generation spans
-- only, other kinds only in a trace without one). Wide aggregates then read one row per trace
-- instead of grouping every span per trace at query time.
-- `version` is the version of the `traces` summary row the rollup mirrors: a rollup is current
-- when (trace_id, version) matches the trace's summary, and the reads bring stale or missing
-- ones up to date first (src/traces/rollups.ts). Deleted traces get a tombstone (below).
CREATE TABLE IF NOT EXISTS trace_rollups {{on_cluster}} (
  workspace_id LowCardinality(String),
  trace_id String,
  start_time DateTime64(6, 'UTC'),            -- the trace's start: earliest start of its live spans
  session_id String,                          -- the trace's session, as in its summary
  by_model Array(Tuple(key LowCardinality(String), spans UInt32, errors UInt32, input_tokens Float64, output_tokens Float64,
    total_tokens Float64, cost_usd Float64, durations Array(Float64))),
  by_provider Array(Tuple(key LowCardinality(String), spans UInt32, errors UInt32, input_tokens Float64, output_tokens Float64,
    total_tokens Float64, cost_usd Float64, durations Array(Float64))),
  by_kind Array(Tuple(key LowCardinality(String), spans UInt32, errors UInt32, input_tokens Float64, output_tokens Float64,
    total_tokens Float64, cost_usd Float64, durations Array(Float64))),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, trace_id)
{{ttl:toDateTime(start_time)}}
{{shard:sipHash64(trace_id)}}
SETTINGS index_granularity = 8192;

-- A trace summary's tombstone (DELETE /api/traces/:id) tombstones the rollup at once, with the
-- same, higher version. Shard-local on a cluster: both tables are sharded by trace id.
CREATE MATERIALIZED VIEW IF NOT EXISTS trace_rollups_tombstones {{on_cluster}} TO {{local:trace_rollups}} AS
SELECT workspace_id, trace_id, start_time, version, is_deleted FROM {{local:traces}} WHERE is_deleted = 1;
