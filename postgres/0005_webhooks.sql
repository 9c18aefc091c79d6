-- Webhooks and their durable outbox. An event row and one delivery row per subscribed
-- endpoint are written in the same transaction as the change they announce, so a change that
-- committed always has its deliveries, whatever happens to the process afterwards.
create table webhooks (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  url text not null,
  events text[] not null check (cardinality(events) > 0),
  -- Kept in plaintext: signing needs the secret itself (a hash cannot sign).
  secret text not null,
  -- 'failing' after repeated failed attempts; a successful delivery makes it 'active' again.
  status text not null default 'active' check (status in ('active', 'failing')),
  consecutive_failures integer not null default 0,
  created_at timestamptz not null default now()
);
create index webhooks_workspace on webhooks (workspace_id, created_at);

create table webhook_events (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  type text not null,
  data jsonb not null,
  created_at timestamptz not null default now()
);

create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  event_id uuid not null references webhook_events (id) on delete cascade,
  webhook_id uuid not null references webhooks (id) on delete cascade,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  -- At most a short excerpt of the receiver's answer; bodies are never stored whole.
  last_response_excerpt text,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  unique (event_id, webhook_id)
);
-- What the workers claim: only pending rows, oldest due first.
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_webhook on webhook_deliveries (webhook_id, created_at desc);
