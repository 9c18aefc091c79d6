-- Scores: one row per (workspace, score id) once deduplicated. The sorting key holds identity
-- only, so a re-sent score id (a correction) always lands on the row it replaces; `version`
-- orders the sends (the newest wins) and `is_deleted = 1` rows are tombstones written by
-- DELETE /api/scores/:id and by DELETE /api/traces/:id for the trace's scores.
-- A score names its target by id alone (trace, span, session) and is joined to it when read,
-- so a score may arrive before its trace. Lookups by trace, session and name go through the
-- skip indexes below to candidate ids, then read those ids' newest rows by the key.
CREATE TABLE IF NOT EXISTS scores {{on_cluster}} (
  workspace_id LowCardinality(String),
  id String,
  name String,
  data_type LowCardinality(String),           -- numeric | categorical | boolean
  value Float64,                              -- boolean 0/1; a categorical score's value from its config, else 0
  string_value String,                        -- the category of a categorical score; 'true'/'false' for boolean; '' for numeric
  comment String CODEC(ZSTD(3)),
  metadata String CODEC(ZSTD(3)),             -- JSON object text; '' when not sent
  source LowCardinality(String),              -- api | sdk | annotation | eval | otel
  environment LowCardinality(String),
  trace_id String,                            -- '' for a session score
  span_id String,                             -- '' for a trace or session score
  session_id String,                          -- the session a session score is on; '' otherwise
  author_id String,                           -- the API key id or token subject that wrote it
  config_id String,                           -- the score config that validated it; '' when none
  eval_trace_id String,                       -- the trace of the judge that produced it (evaluators); '' otherwise
  timestamp DateTime64(6, 'UTC'),
  created_at DateTime64(6, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0,
  INDEX scores_trace trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
  INDEX scores_session session_id TYPE bloom_filter(0.001) GRANULARITY 1,
  INDEX scores_name name TYPE bloom_filter(0.01) GRANULARITY 1,
  INDEX scores_time timestamp TYPE minmax GRANULARITY 1
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, id)
{{ttl:toDateTime(timestamp)}}
{{shard:sipHash64(id)}}
SETTINGS index_granularity = 1024;
