-- Score configs: per workspace, what a score of a name may be. A score whose name has a config
-- is validated against it (src/scores/model/config-rules.ts); configs also drive the console's
-- annotation controls. Archived configs still validate but are offered no more.
create table score_configs (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  data_type text not null check (data_type in ('numeric', 'categorical', 'boolean')),
  min_value double precision,
  max_value double precision,
  -- [{label, value}] for categorical configs, null otherwise.
  categories jsonb,
  description text check (description is null or length(description) <= 4000),
  -- Whether a higher value is better (numeric, boolean, categorical by value): drives verdicts.
  higher_is_better boolean not null default true,
  archived boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (min_value is null or max_value is null or min_value <= max_value),
  check ((data_type = 'categorical') = (categories is not null))
);

create unique index score_configs_name on score_configs (workspace_id, name);
