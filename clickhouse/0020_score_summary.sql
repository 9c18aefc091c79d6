-- Scores sorted by name and trace: a copy of every row of `scores` (tombstones included) with
-- the columns the trace reads, the score figures and the prompt comparison need, so a read by
-- score name (the trace list's score filter, the figures of a name) reads that name's rows, a
-- trace's scores a few granules of each name, and the reads over many scores (stats, the prompt
-- comparison) these narrow rows rather than `scores` whole. Not a rollup: read with FINAL like
-- `scores`, one live row per (workspace, name, trace, score id), so figures stay exact.
--
-- The key holds the name and the trace: a correction (a re-sent id) that moves a score to another
-- name or trace leaves its older row under the old key. The second view below hides it: for each
-- row inserted into `scores` it looks up the id's other rows (in `scores` by its key, and in the
-- same insert) and, for each one under another (name, trace), writes a tombstone of the older
-- row's key at the newer row's version. A correction read before its older row, or an older row
-- arriving after its correction, are both covered. Deletes need nothing: a tombstone in
-- `scores` carries the deleted row's name and trace, its own key here.
CREATE TABLE IF NOT EXISTS score_summary {{on_cluster}} (
  workspace_id LowCardinality(String),
  name String,
  trace_id String,                            -- '' for a session score
  id String,
  span_id String,
  session_id String,
  data_type LowCardinality(String),
  value Float64,
  string_value String,
  comment String CODEC(ZSTD(3)),
  source LowCardinality(String),
  environment LowCardinality(String),
  author_id String,
  timestamp DateTime64(6, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0,
  -- Retention as in `scores` (clickhouse/0016_retention.sql, src/retention/engine-retention.ts).
  expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(timestamp, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC')
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, name, trace_id, id)
TTL expires_at
{{shard:sipHash64(id)}}
SETTINGS index_granularity = 1024;

-- Every row inserted into `scores`, whatever wrote it (on a cluster, on the shard that stores
-- it: both tables are sharded by score id).
CREATE MATERIALIZED VIEW IF NOT EXISTS score_summary_mv {{on_cluster}} TO {{local:score_summary}} AS
SELECT workspace_id, name, trace_id, id, span_id, session_id, data_type, value, string_value, comment, source, environment,
  author_id, timestamp, version, is_deleted
FROM {{local:scores}};

-- The rows of `scores` as stored: inside a materialized view on `scores`, the name `scores`
-- means the rows being inserted, so the view below reads the stored rows through this one.
CREATE VIEW IF NOT EXISTS score_summary_stored {{on_cluster}} AS
SELECT workspace_id, id, name, trace_id, span_id, session_id, data_type, value, string_value, comment, source, environment,
  author_id, timestamp, version
FROM {{local:scores}};

-- Tombstones of the rows a correction moved away from (see above): per inserted row `n` and
-- another row `o` of its id under another (name, trace), the older one's key at the newer version.
CREATE MATERIALIZED VIEW IF NOT EXISTS score_summary_moves_mv {{on_cluster}} TO {{local:score_summary}} AS
SELECT n.workspace_id AS workspace_id,
  if(o.version < n.version, o.name, n.name) AS name,
  if(o.version < n.version, o.trace_id, n.trace_id) AS trace_id,
  n.id AS id,
  if(o.version < n.version, o.span_id, n.span_id) AS span_id,
  if(o.version < n.version, o.session_id, n.session_id) AS session_id,
  if(o.version < n.version, o.data_type, n.data_type) AS data_type,
  if(o.version < n.version, o.value, n.value) AS value,
  if(o.version < n.version, o.string_value, n.string_value) AS string_value,
  '' AS comment,
  if(o.version < n.version, o.source, n.source) AS source,
  if(o.version < n.version, o.environment, n.environment) AS environment,
  '' AS author_id,
  if(o.version < n.version, o.timestamp, n.timestamp) AS timestamp,
  greatest(o.version, n.version) AS version,
  1 AS is_deleted
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

-- The scores stored before: the live row of each id (older rows and tombstones need no copy).
INSERT INTO score_summary (workspace_id, name, trace_id, id, span_id, session_id, data_type, value, string_value, comment, source,
  environment, author_id, timestamp, version, is_deleted)
SELECT workspace_id, name, trace_id, id, span_id, session_id, data_type, value, string_value, comment, source, environment,
  author_id, timestamp, version, 0
FROM scores FINAL
WHERE is_deleted = 0;
