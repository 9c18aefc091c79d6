-- A prompt is a name in a workspace; its versions share the group id. The group row is
-- what concurrent writers lock, and what a delete removes (its versions cascade).
create table prompt_groups (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null,
  created_at timestamptz not null default now(),
  unique (workspace_id, name),
  -- Target of the versions' composite key: a version cannot name another workspace's group
  -- nor carry a name other than its group's.
  unique (id, workspace_id, name)
);

create table prompts (
  id integer generated always as identity primary key,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  prompt_group_id uuid not null,
  name text not null,
  version text not null,
  -- The semver key: ordering by these integers puts 1.10.0 after 1.9.0, which text does not.
  version_major integer not null check (version_major >= 0),
  version_minor integer not null check (version_minor >= 0),
  version_patch integer not null check (version_patch >= 0),
  is_latest boolean not null default false,
  system_prompt text not null,
  human_prompt text,
  raw_prompt text,
  description text not null default '',
  metadata jsonb not null default '{}'::jsonb check (jsonb_typeof(metadata) = 'object'),
  output_schema jsonb check (output_schema is null or jsonb_typeof(output_schema) = 'object'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (prompt_group_id, workspace_id, name)
    references prompt_groups (id, workspace_id, name) on delete cascade,
  unique (workspace_id, name, version),
  -- The text and the key can never disagree (no prerelease or build suffix is stored).
  check (version = version_major::text || '.' || version_minor::text || '.' || version_patch::text)
);

-- At most one active version per name, whatever the code does, also under concurrent writers.
create unique index prompts_one_latest on prompts (workspace_id, name) where is_latest;
create index prompts_group_version on prompts (prompt_group_id, version_major desc, version_minor desc, version_patch desc);
