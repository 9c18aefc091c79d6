-- How long a workspace keeps its trace data (docs/decisions/104-retention.md). One row per
-- workspace and environment; environment '' is the workspace's own default. A workspace
-- without a row keeps the deployment's default (LOUPE_RETENTION_DAYS). Prompt data is never
-- expired, so nothing here touches it. The service copies these rows to the trace store,
-- whose engine removes expired rows by TTL.
create table retention_settings (
  workspace_id uuid not null references workspaces (id) on delete cascade,
  environment text not null check (length(environment) <= 256),
  retention_days integer not null check (retention_days between 1 and 36500),
  updated_at timestamptz not null default now(),
  primary key (workspace_id, environment)
);
