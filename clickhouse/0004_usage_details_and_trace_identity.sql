-- Fields real instrumentations send that the first schema had no place for.
-- Spans: usage details (cache reads and writes, reasoning: each part of the main counts, see
-- clickhouse/README.md), time to first token, the prompt version a generation used, and how
-- its cost was found. Traces and spans (copied onto every span row like the other trace-level
-- fields, so span queries never join): the service, the end user and the tags.
ALTER TABLE {{local:spans}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS cache_read_tokens Nullable(Float64) AFTER cost_usd,
  ADD COLUMN IF NOT EXISTS cache_write_tokens Nullable(Float64) AFTER cache_read_tokens,
  ADD COLUMN IF NOT EXISTS reasoning_tokens Nullable(Float64) AFTER cache_write_tokens,
  ADD COLUMN IF NOT EXISTS ttft_ms Nullable(Float64) AFTER reasoning_tokens,
  ADD COLUMN IF NOT EXISTS cost_source LowCardinality(String) DEFAULT '' AFTER ttft_ms,
  ADD COLUMN IF NOT EXISTS prompt_name String DEFAULT '' AFTER cost_source,
  ADD COLUMN IF NOT EXISTS prompt_version String DEFAULT '' AFTER prompt_name,
  ADD COLUMN IF NOT EXISTS service LowCardinality(String) DEFAULT '' AFTER environment,
  ADD COLUMN IF NOT EXISTS user_id String DEFAULT '' AFTER service,
  ADD COLUMN IF NOT EXISTS tags Array(String) DEFAULT [] AFTER user_id;

ALTER TABLE {{distributed:spans}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS cache_read_tokens Nullable(Float64) AFTER cost_usd,
  ADD COLUMN IF NOT EXISTS cache_write_tokens Nullable(Float64) AFTER cache_read_tokens,
  ADD COLUMN IF NOT EXISTS reasoning_tokens Nullable(Float64) AFTER cache_write_tokens,
  ADD COLUMN IF NOT EXISTS ttft_ms Nullable(Float64) AFTER reasoning_tokens,
  ADD COLUMN IF NOT EXISTS cost_source LowCardinality(String) DEFAULT '' AFTER ttft_ms,
  ADD COLUMN IF NOT EXISTS prompt_name String DEFAULT '' AFTER cost_source,
  ADD COLUMN IF NOT EXISTS prompt_version String DEFAULT '' AFTER prompt_name,
  ADD COLUMN IF NOT EXISTS service LowCardinality(String) DEFAULT '' AFTER environment,
  ADD COLUMN IF NOT EXISTS user_id String DEFAULT '' AFTER service,
  ADD COLUMN IF NOT EXISTS tags Array(String) DEFAULT [] AFTER user_id;

ALTER TABLE {{local:traces}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS service LowCardinality(String) DEFAULT '' AFTER environment,
  ADD COLUMN IF NOT EXISTS user_id String DEFAULT '' AFTER service,
  ADD COLUMN IF NOT EXISTS tags Array(String) DEFAULT [] AFTER user_id;

ALTER TABLE {{distributed:traces}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS service LowCardinality(String) DEFAULT '' AFTER environment,
  ADD COLUMN IF NOT EXISTS user_id String DEFAULT '' AFTER service,
  ADD COLUMN IF NOT EXISTS tags Array(String) DEFAULT [] AFTER user_id;

-- Users and prompt versions are the entry points of per-user and per-version questions: a
-- bloom filter lets scans skip granules of other users and prompts.
ALTER TABLE {{local:traces}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_user_id user_id TYPE bloom_filter(0.01) GRANULARITY 4;

ALTER TABLE {{local:spans}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_prompt_name prompt_name TYPE bloom_filter(0.01) GRANULARITY 4;

-- The views select `*`: recreated so they carry the new columns.
CREATE OR REPLACE VIEW spans_latest {{on_cluster}} AS
SELECT * EXCEPT (is_deleted), input, output, attributes, events, metadata FROM spans FINAL WHERE is_deleted = 0;

CREATE OR REPLACE VIEW traces_latest {{on_cluster}} AS
SELECT * EXCEPT (is_deleted) FROM traces FINAL WHERE is_deleted = 0;
