-- One trace's reads (GET /api/traces/:id, its tree, one span, a delete) go by the key
-- (workspace_id, trace_id). In a part the primary index narrows them to the granule where the
-- trace would sit, but under a steady ingest the store holds several small recent parts, each
-- a granule or a few wide, and each such granule covers nearly the whole range of trace ids:
-- without this index every small part had one granule of every column read (`detail`, the
-- heaviest) for a trace it does not hold. A bloom filter of the trace ids in each granule
-- lets a read skip those parts; all rows of a trace, every version and tombstone, share its
-- id, so a read with FINAL skips nothing it needs. Parts written before this migration have
-- no index and are read as before; merges give it to the parts they write.
ALTER TABLE {{local:spans}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_trace_id trace_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE {{local:traces}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_trace_id trace_id TYPE bloom_filter(0.01) GRANULARITY 1;
