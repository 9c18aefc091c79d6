-- Organizations own workspaces; every prompt and trace belongs to exactly one workspace.
create table organizations (
  id uuid primary key default gen_random_uuid(),
  name text not null unique,
  plan text not null check (plan in ('free', 'pro', 'enterprise')),
  -- Only enterprise organizations carry their own limits; the others follow their plan.
  rate_limit_per_minute integer check (rate_limit_per_minute > 0),
  rate_limit_per_day integer check (rate_limit_per_day > 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table workspaces (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  name text not null,
  created_at timestamptz not null default now(),
  unique (organization_id, name)
);

create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null unique,
  -- The `sub` claim of the user's OAuth tokens.
  external_subject text unique,
  created_at timestamptz not null default now()
);

create table memberships (
  organization_id uuid not null references organizations (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (organization_id, user_id)
);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  name text,
  scope text not null check (scope in ('workspace', 'organization', 'user')),
  organization_id uuid not null references organizations (id) on delete cascade,
  workspace_id uuid references workspaces (id) on delete cascade,
  user_id uuid references users (id) on delete cascade,
  -- The first characters of the key, shown in lists and used to find the row; the rest is secret.
  prefix text not null,
  -- sha256 of the whole key; the plaintext is never stored.
  hash bytea not null unique,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  check ((scope = 'workspace') = (workspace_id is not null)),
  check ((scope = 'user') = (user_id is not null))
);
create index api_keys_prefix on api_keys (prefix);
create index api_keys_organization on api_keys (organization_id);
