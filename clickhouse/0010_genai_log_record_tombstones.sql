-- Deleting a trace (DELETE /api/traces/:id) deletes its GenAI log records too, the way it
-- deletes its spans and summary: tombstones, rows of the same key with a newer version,
-- `is_deleted = 1` and an empty body (docs/decisions/050-otlp-fidelity.md). The table's engine
-- keeps its one argument: a tombstone is the newest row of its key, which readers skip.
ALTER TABLE {{local:genai_log_records}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS is_deleted UInt8 DEFAULT 0 AFTER version;

ALTER TABLE {{distributed:genai_log_records}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS is_deleted UInt8 DEFAULT 0 AFTER version;
