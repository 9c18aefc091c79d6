-- Scores sorted by target: a copy of every row of `scores` (tombstones included), all its
-- columns, sorted by (workspace, trace, score id), kept by a materialized view. A trace's scores,
-- the averages of a page of traces, of users and of sessions, and the lists of GET /api/scores by
-- trace, session or user read the traces' own granules here: in `score_summary` (sorted by
-- name first) one trace's scores lie in every name's range, and in `scores` (by id) anywhere.
-- Read with FINAL like `scores`: one live row per (workspace, trace, score id).
--
-- The key holds the trace and not the name: a correction that changes a score's name, value or
-- session lands on the row it replaces, whatever order its rows arrive in (two writes of one id
-- under two names at once included). Only a correction that moves a score to another trace (or
-- between a trace and none) leaves its older row under the old key; the view below hides it with
-- a tombstone of the older row's key at the newer version. A session score has trace_id '': a
-- session's own scores lie together at the start of the workspace's range, found by the index.
CREATE TABLE IF NOT EXISTS score_targets {{on_cluster}} (
  workspace_id LowCardinality(String),
  trace_id String,                            -- '' for a session score
  id String,
  name String,
  data_type LowCardinality(String),
  value Float64,
  string_value String,
  comment String CODEC(ZSTD(3)),
  metadata String CODEC(ZSTD(3)),
  source LowCardinality(String),
  environment LowCardinality(String),
  span_id String,
  session_id String,
  author_id String,
  config_id String,
  eval_trace_id String,
  timestamp DateTime64(6, 'UTC'),
  created_at DateTime64(6, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0,
  -- Retention as in `scores` (clickhouse/0016_retention.sql, src/retention/engine-retention.ts).
  expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(timestamp, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC'),
  INDEX score_targets_session session_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, trace_id, id)
TTL expires_at
{{shard:sipHash64(id)}}
SETTINGS index_granularity = 1024;

-- Every row inserted into `scores`, whatever wrote it (on a cluster, on the shard that stores it:
-- both tables are sharded by score id).
CREATE MATERIALIZED VIEW IF NOT EXISTS score_targets_mv {{on_cluster}} TO {{local:score_targets}} AS
SELECT workspace_id, trace_id, id, name, data_type, value, string_value, comment, metadata, source, environment, span_id,
  session_id, author_id, config_id, eval_trace_id, timestamp, created_at, version, is_deleted
FROM {{local:scores}};

-- The moved rows of each insert into `scores`, found once for both summaries: per inserted row
-- `n` and another row `o` of its id under another (name, trace), the older one's columns at the
-- newer version (as clickhouse/0020's `score_summary_moves_mv` found them, which this replaces).
-- It stores nothing: the two views below take each row to a summary.
CREATE TABLE IF NOT EXISTS score_moves {{on_cluster}} (
  workspace_id LowCardinality(String),
  id String,
  name String,
  trace_id String,
  span_id String,
  session_id String,
  data_type LowCardinality(String),
  value Float64,
  string_value String,
  source LowCardinality(String),
  environment LowCardinality(String),
  timestamp DateTime64(6, 'UTC'),
  version UInt64,
  moved_trace UInt8                           -- 1 when the two rows name different traces
)
ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS score_moves_mv {{on_cluster}} TO score_moves AS
SELECT n.workspace_id AS workspace_id,
  n.id AS id,
  if(o.version < n.version, o.name, n.name) AS name,
  if(o.version < n.version, o.trace_id, n.trace_id) AS trace_id,
  if(o.version < n.version, o.span_id, n.span_id) AS span_id,
  if(o.version < n.version, o.session_id, n.session_id) AS session_id,
  if(o.version < n.version, o.data_type, n.data_type) AS data_type,
  if(o.version < n.version, o.value, n.value) AS value,
  if(o.version < n.version, o.string_value, n.string_value) AS string_value,
  if(o.version < n.version, o.source, n.source) AS source,
  if(o.version < n.version, o.environment, n.environment) AS environment,
  if(o.version < n.version, o.timestamp, n.timestamp) AS timestamp,
  greatest(o.version, n.version) AS version,
  toUInt8(o.trace_id != n.trace_id) AS moved_trace
FROM {{local:scores}} AS n
INNER JOIN (
  SELECT workspace_id, id, name, trace_id, span_id, session_id, data_type, value, string_value, source, environment, timestamp, version
  FROM score_summary_stored
  WHERE (workspace_id, id) IN (SELECT workspace_id, id FROM {{local:scores}})
  UNION ALL
  SELECT workspace_id, id, name, trace_id, span_id, session_id, data_type, value, string_value, source, environment, timestamp, version
  FROM {{local:scores}}
) AS o ON o.workspace_id = n.workspace_id AND o.id = n.id
WHERE o.name != n.name OR o.trace_id != n.trace_id;

-- `score_summary` (sorted by name and trace): a tombstone of the older row's key for every move.
CREATE MATERIALIZED VIEW IF NOT EXISTS score_summary_moved_mv {{on_cluster}} TO {{local:score_summary}} AS
SELECT workspace_id, name, trace_id, id, span_id, session_id, data_type, value, string_value, '' AS comment, source, environment,
  '' AS author_id, timestamp, version, 1 AS is_deleted
FROM score_moves;

-- `score_targets` (sorted by trace): only for a move to another trace; under one trace the key is the same.
CREATE MATERIALIZED VIEW IF NOT EXISTS score_targets_moved_mv {{on_cluster}} TO {{local:score_targets}} AS
SELECT workspace_id, trace_id, id, name, data_type, value, string_value, '' AS comment, '' AS metadata, source, environment, span_id,
  session_id, '' AS author_id, '' AS config_id, '' AS eval_trace_id, timestamp, toDateTime64(0, 6, 'UTC') AS created_at, version,
  1 AS is_deleted
FROM score_moves
WHERE moved_trace = 1;

-- The view above finds every move now; the one it replaces would write the same tombstones again.
DROP VIEW IF EXISTS score_summary_moves_mv {{on_cluster}};

-- The scores stored before: the live row of each id (older rows and tombstones need no copy).
INSERT INTO score_targets (workspace_id, trace_id, id, name, data_type, value, string_value, comment, metadata, source, environment,
  span_id, session_id, author_id, config_id, eval_trace_id, timestamp, created_at, version, is_deleted)
SELECT workspace_id, trace_id, id, name, data_type, value, string_value, comment, metadata, source, environment, span_id,
  session_id, author_id, config_id, eval_trace_id, timestamp, created_at, version, 0
FROM scores FINAL
WHERE is_deleted = 0;
