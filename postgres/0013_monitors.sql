-- Monitors: a metric of a workspace's traces over a window, a condition, and a state with its
-- history. The state moves by conditional updates (ok/resolved -> firing names a new episode;
-- firing -> resolved names the episode it ends), so two service instances evaluating the same
-- monitor at once transition it once, and the webhook event goes out in that same transaction.
create table monitors (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null,
  -- cost | error_rate | latency_p95 | trace_count | score_mean | unpriced_spans
  metric text not null,
  -- The score name of a score_mean monitor; null for the others.
  score_name text,
  window_seconds integer not null check (window_seconds between 60 and 2592000),
  -- {environment?, model?, name?, tag?, userId?}
  filters jsonb not null default '{}',
  -- {kind: 'threshold', direction, value} or {kind: 'change', direction, percent}
  condition jsonb not null,
  enabled boolean not null default true,
  state text not null default 'ok' check (state in ('ok', 'firing', 'resolved')),
  -- The open episode while firing; null otherwise.
  episode_id uuid,
  last_value double precision,
  last_evaluated_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((state = 'firing') = (episode_id is not null))
);
create index monitors_workspace on monitors (workspace_id, created_at);

-- One row per firing episode: opened when the monitor fires, closed when it resolves.
create table monitor_episodes (
  id uuid primary key,
  monitor_id uuid not null references monitors (id) on delete cascade,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  fired_at timestamptz not null,
  fired_value double precision,
  resolved_at timestamptz,
  resolved_value double precision
);
create index monitor_episodes_monitor on monitor_episodes (monitor_id, fired_at desc);
