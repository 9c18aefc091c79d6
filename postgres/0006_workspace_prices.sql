-- Model prices a workspace sets for itself; they take priority over the built-in table
-- (src/traces/cost/). A model is matched exactly (case-insensitive) or by a regular
-- expression run by RE2 (linear time); a provider, when set, narrows the price to that
-- provider after normalization; valid_from, when set, starts the price at that instant
-- (a span is priced by its start time).
create table workspace_prices (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  model text not null check (length(model) between 1 and 256),
  match_type text not null check (match_type in ('exact', 'regex')),
  provider text check (provider is null or length(provider) between 1 and 256),
  input_per_million double precision not null check (input_per_million >= 0),
  output_per_million double precision not null check (output_per_million >= 0),
  cache_read_per_million double precision check (cache_read_per_million >= 0),
  cache_write_per_million double precision check (cache_write_per_million >= 0),
  valid_from timestamptz,
  created_at timestamptz not null default now()
);

-- Every read is one workspace's whole list (the ingest cache loads it at once).
create index workspace_prices_workspace on workspace_prices (workspace_id, created_at);
