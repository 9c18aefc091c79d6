-- Evaluators: model connections (a workspace's judge models), evaluators, and their durable
-- job queue. A job's key (evaluator, version, target) is unique, so a target is scored at most
-- once per evaluator version whatever the number of workers or restarts.
create table model_connections (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null,
  provider text not null check (provider in ('openai', 'anthropic')),
  base_url text not null,
  -- AES-256-GCM under LOUPE_ENCRYPTION_KEY: iv, auth tag and ciphertext, base64, joined by '.'.
  api_key_sealed text not null,
  -- The last 4 characters, the only part of the key ever answered.
  api_key_tail text not null,
  default_model text not null,
  parameters jsonb not null default '{}'::jsonb check (jsonb_typeof(parameters) = 'object'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, name)
);

create table evaluators (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null,
  -- Bumped by every change of what the evaluator does: a new version may score a target again.
  version integer not null default 1,
  status text not null default 'active' check (status in ('active', 'paused')),
  kind text not null check (kind in ('llm_judge', 'check')),
  -- The evaluator's definition as the API accepts it (judge or check, score, target filters).
  definition jsonb not null check (jsonb_typeof(definition) = 'object'),
  connection_id uuid references model_connections (id) on delete restrict,
  -- Traces that started before this were all looked at: where the next scan for targets starts.
  scanned_from timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, name)
);
create index evaluators_active on evaluators (workspace_id) where status = 'active';

-- 'skipped': the trace was left out by the sampling rate, or the evaluator changed before it ran.
create table evaluator_jobs (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  evaluator_id uuid not null references evaluators (id) on delete cascade,
  evaluator_version integer not null,
  trace_id text not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'skipped')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text,
  score_id text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  unique (evaluator_id, evaluator_version, trace_id)
);
create index evaluator_jobs_due on evaluator_jobs (next_attempt_at) where status = 'pending';
create index evaluator_jobs_evaluator on evaluator_jobs (evaluator_id, created_at desc);
