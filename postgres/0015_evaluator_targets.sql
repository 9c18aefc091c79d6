-- Evaluators, further: spans and experiment run items as targets, the judge's own trace, and a
-- per-connection rate limit. A job's key becomes (evaluator, version, trace, span): a trace is
-- the target with span '' (every job before this one), a span names its id. A run item's job
-- keeps its run and dataset item, whose expected output the judge may be shown.
alter table evaluator_jobs
  add column span_id text not null default '',
  add column run_id uuid,
  add column dataset_item_id text,
  -- The trace (source `evaluator`) of the job's last judge call: its messages, tokens and cost.
  add column judge_trace_id text,
  -- The token of the claim that holds the job until its lease (next_attempt_at) ends; null when none does.
  add column claim uuid;
alter table evaluator_jobs drop constraint evaluator_jobs_evaluator_id_evaluator_version_trace_id_key;
alter table evaluator_jobs add constraint evaluator_jobs_target unique (evaluator_id, evaluator_version, trace_id, span_id);

-- Calls per minute this process makes with the connection (null: no limit of Loupe's own).
alter table model_connections add column requests_per_minute integer check (requests_per_minute is null or requests_per_minute > 0);
