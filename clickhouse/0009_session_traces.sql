-- A session's traces, sorted by session: the summaries of the traces that have a session, one
-- row per (workspace, session, trace) and version, so a session's page and figures read that
-- session's rows only, whatever the size of `traces` and however its traces' ids spread.
-- (In `traces`, sorted by trace id, a long session's rows lie in every granule of its time span,
-- and its bloom filter skips nothing.) Not a rollup: each row is a copy of one summary row, read
-- with FINAL like `traces`, so the figures stay exact under re-sends and deletes.
--
-- The key holds the session: a trace moved to another session by a later payload leaves a row
-- under its old session, which the service hides with a tombstone of that (session, trace) key
-- (src/traces/session-traces-table.ts); a deleted trace's tombstone carries its session. Both stay exact
-- through merges, since the tombstone's key is the row's own.
CREATE TABLE IF NOT EXISTS session_traces {{on_cluster}} (
  workspace_id LowCardinality(String),
  session_id String,
  trace_id String,
  start_time DateTime64(6, 'UTC'),
  end_time Nullable(DateTime64(6, 'UTC')),
  status LowCardinality(String),
  user_id String,
  input_tokens Nullable(Float64),
  output_tokens Nullable(Float64),
  total_tokens Nullable(Float64),
  cost_usd Nullable(Float64),
  error_count UInt32,
  item String CODEC(ZSTD(1)),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, session_id, trace_id)
{{ttl:toDateTime(start_time)}}
{{shard:sipHash64(trace_id)}}
SETTINGS index_granularity = 1024;

-- Every summary row with a session, tombstones included, copied as it is inserted into `traces`
-- (on a cluster, on the shard that stores it: both tables are sharded by trace).
CREATE MATERIALIZED VIEW IF NOT EXISTS session_traces_mv {{on_cluster}} TO {{local:session_traces}} AS
SELECT workspace_id, session_id, trace_id, start_time, end_time, status, user_id, input_tokens, output_tokens, total_tokens,
  cost_usd, error_count, item, version, is_deleted
FROM {{local:traces}}
WHERE session_id != '';

-- The summaries stored before: the live row of each trace with a session (older rows and
-- tombstones need no copy, the live rows already are the deduplicated state).
INSERT INTO session_traces (workspace_id, session_id, trace_id, start_time, end_time, status, user_id, input_tokens, output_tokens,
  total_tokens, cost_usd, error_count, item, version, is_deleted)
SELECT workspace_id, session_id, trace_id, start_time, end_time, status, user_id, input_tokens, output_tokens, total_tokens,
  cost_usd, error_count, item, version, 0
FROM traces FINAL
WHERE is_deleted = 0 AND session_id != '';
