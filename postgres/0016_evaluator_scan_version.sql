-- Evaluators of traces and spans scan what changed in the trace store, not traces by start
-- time: the mark is a trace summary's version (clickhouse/0001 `traces.version`, nanoseconds
-- since the epoch by the writing process's clock; each flush of a trace raises it), and the scan
-- reads the summaries written above it (src/evaluators/service/worker.ts). A trace whose start
-- moves back (its root arriving after its children) or that arrives after a later-started one
-- was scanned is still found. `scanned_from` stays the mark of run items (their record time).
alter table evaluators
  -- A new evaluator starts a minute before it was made (writes parsed just before, stored just after).
  add column scanned_version bigint not null default ((extract(epoch from now()) - 60) * 1000000000)::bigint;
-- An evaluator made before this takes again the hour before its start-time mark: the targets the
-- scan by start time left behind are queued, those it queued are found again and dropped by the key.
update evaluators set scanned_version = ((extract(epoch from scanned_from) - 3600) * 1000000000)::bigint;
