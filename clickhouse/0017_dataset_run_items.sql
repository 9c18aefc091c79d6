-- Run items of dataset runs (experiments), mirrored from PostgreSQL (postgres/0010, 0014) so
-- that SQL reads can join them with spans and scores by trace_id / span_id
-- (docs/decisions/106-run-items-for-sql.md). One row per (workspace, run, dataset item) once
-- deduplicated: `version` is the PostgreSQL row's (the newest write wins) and `is_deleted = 1`
-- rows are the tombstones of a deleted run or dataset.
CREATE TABLE IF NOT EXISTS dataset_run_items {{on_cluster}} (
  workspace_id LowCardinality(String),
  dataset_id String,
  run_id String,
  run_name String,
  dataset_item_id String,
  trace_id String,
  span_id String,                             -- '' when the run item names no span
  output String CODEC(ZSTD(3)),               -- JSON text; '' when none was recorded
  error String CODEC(ZSTD(3)),                -- the error recorded on the item; '' when none
  created_at DateTime64(6, 'UTC'),
  updated_at DateTime64(6, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0,
  INDEX dataset_run_items_trace trace_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, run_id, dataset_item_id)
{{shard:sipHash64(run_id)}}
SETTINGS index_granularity = 1024;
