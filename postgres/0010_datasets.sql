-- Datasets and experiments: fixed cases (items) a prompt or an agent is run over, and the runs.
-- A dataset's items are versioned by time: every change of an item is a new row of
-- dataset_item_versions, and the row it replaces gets its valid_to. The items as they were at
-- a time T are the rows with valid_from <= T < coalesce(valid_to, infinity); a run records the
-- time it used (dataset_version). Writes to one dataset's items are serialized by a row lock on
-- the dataset, so versions never overlap.
create table datasets (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  description text check (description is null or length(description) <= 4000),
  metadata jsonb not null default '{}'::jsonb,
  -- JSON Schemas the items' input and expected output are checked against (null: any JSON).
  input_schema jsonb,
  expected_output_schema jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create unique index datasets_name on datasets (workspace_id, name);

create table dataset_item_versions (
  version_id bigint generated always as identity primary key,
  dataset_id uuid not null references datasets (id) on delete cascade,
  -- Client-supplied (for upsert) or generated.
  item_id text not null check (length(item_id) between 1 and 128),
  input jsonb not null,
  expected_output jsonb,
  metadata jsonb not null default '{}'::jsonb,
  source_trace_id text,
  source_span_id text,
  status text not null check (status in ('active', 'archived')),
  -- When the item was first written (carried over to every later version).
  created_at timestamptz not null,
  valid_from timestamptz not null,
  valid_to timestamptz,
  check (valid_to is null or valid_to >= valid_from)
);

-- One current version per item.
create unique index dataset_item_versions_current on dataset_item_versions (dataset_id, item_id) where valid_to is null;
create index dataset_item_versions_history on dataset_item_versions (dataset_id, item_id, valid_from);

create table dataset_runs (
  id uuid primary key default gen_random_uuid(),
  dataset_id uuid not null references datasets (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  description text check (description is null or length(description) <= 4000),
  -- What was run: the prompt version, the model, and so on.
  metadata jsonb not null default '{}'::jsonb,
  -- The time of the dataset's items the run used (asOf of its items).
  dataset_version timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create unique index dataset_runs_name on dataset_runs (dataset_id, name);

create table dataset_run_items (
  run_id uuid not null references dataset_runs (id) on delete cascade,
  dataset_item_id text not null check (length(dataset_item_id) between 1 and 128),
  -- The trace that processed the item (its scores reach the run item through it).
  trace_id text not null check (length(trace_id) between 1 and 128),
  span_id text check (span_id is null or length(span_id) between 1 and 128),
  output jsonb,
  error text check (error is null or length(error) <= 20000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (run_id, dataset_item_id)
);

create index dataset_run_items_trace on dataset_run_items (trace_id);
