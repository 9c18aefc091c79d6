-- The evaluators' scan reads the summaries written after its mark (`version` above it,
-- src/traces/tables/traces-table-changes.ts). A part's rows are written together, so each
-- granule's range of versions is narrow until merges join old parts, whose versions are then
-- all old: a minmax index lets that read skip every granule written before the mark instead of
-- reading the version of every trace of the workspace.
ALTER TABLE {{local:traces}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_version version TYPE minmax GRANULARITY 1;

-- Parts written before this migration get the index now, not only when merges rewrite them.
ALTER TABLE {{local:traces}} {{on_cluster}} MATERIALIZE INDEX idx_version SETTINGS mutations_sync = 2;
