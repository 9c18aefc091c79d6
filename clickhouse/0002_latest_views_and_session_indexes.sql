-- Views that already deduplicate: one live row per span and per trace, tombstones hidden.
-- FINAL is cheap on reads bounded by (workspace_id, trace_id); for wide scans over many
-- traces prefer argMax / LIMIT 1 BY over a narrow column set (see clickhouse/README.md).
CREATE VIEW IF NOT EXISTS spans_latest {{on_cluster}} AS
SELECT * EXCEPT (is_deleted) FROM spans FINAL WHERE is_deleted = 0;

CREATE VIEW IF NOT EXISTS traces_latest {{on_cluster}} AS
SELECT * EXCEPT (is_deleted) FROM traces FINAL WHERE is_deleted = 0;

-- Sessions are the usual entry point of a data team's question ("what happened in this
-- conversation"); a bloom filter lets scans without FINAL skip granules of other sessions.
-- Indexes live on the storage tables ({{local:…}} is the table itself on one node and its
-- `_local` shard table on a cluster, never the Distributed table in front).
ALTER TABLE {{local:traces}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_session_id session_id TYPE bloom_filter(0.01) GRANULARITY 4;

ALTER TABLE {{local:spans}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_session_id session_id TYPE bloom_filter(0.01) GRANULARITY 4;
