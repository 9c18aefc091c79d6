-- Request counters per organization and fixed window, shared by every replica.
-- Unlogged: a counter is worth no WAL write on the hot path, and losing the current
-- windows after a crash only hands out one window's budget again.
create unlogged table rate_limit_windows (
  organization_id uuid not null,
  kind text not null check (kind in ('minute', 'day')),
  window_start timestamptz not null,
  count integer not null,
  primary key (organization_id, kind, window_start)
);
-- Pruning deletes old windows of every organization by start time.
create index rate_limit_windows_start on rate_limit_windows (window_start);
