-- Which traces a user has, sorted by user: a read filtered on one user (a list or a count with
-- `userId`, `GET /api/users/:id`, the sessions of a user) takes its candidate traces from here
-- and reads those summaries by their key, instead of every summary of the workspace. (In
-- `traces`, sorted by trace id, one user's traces lie in nearly every granule, and the user_id
-- bloom filter skips almost nothing.)
--
-- A superset, never the answer: every summary row with a user is copied here, so a trace that
-- has since moved to another user, or been deleted, keeps a row under its former user. The
-- reads apply every filter to the live summary (`traces FINAL`, `user_id = …`, `is_deleted = 0`)
-- and use this table only to narrow which summaries they read, so such rows match nothing and
-- need no tombstone. Rows of one (workspace, user, trace) collapse in merges.
CREATE TABLE IF NOT EXISTS user_traces {{on_cluster}} (
  workspace_id LowCardinality(String),
  user_id String,
  trace_id String,
  start_time DateTime64(6, 'UTC')
)
ENGINE = {{engine:ReplacingMergeTree()}}
ORDER BY (workspace_id, user_id, trace_id)
{{ttl:toDateTime(start_time)}}
{{shard:sipHash64(trace_id)}}
SETTINGS index_granularity = 1024;

-- Every summary row with a user, as it is inserted into `traces` (on a cluster, on the shard
-- that stores it: both tables are sharded by trace).
CREATE MATERIALIZED VIEW IF NOT EXISTS user_traces_mv {{on_cluster}} TO {{local:user_traces}} AS
SELECT workspace_id, user_id, trace_id, start_time
FROM {{local:traces}}
WHERE user_id != '';

-- The traces stored before.
INSERT INTO user_traces (workspace_id, user_id, trace_id, start_time)
SELECT workspace_id, user_id, trace_id, start_time
FROM traces FINAL
WHERE is_deleted = 0 AND user_id != '';
