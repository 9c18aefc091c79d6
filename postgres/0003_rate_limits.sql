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

-- Grants up to p_want requests to an organization in both windows at once, never beyond
-- either limit, and answers the counts after the grant. Replicas reserve small batches with
-- it and admit from them locally, so one organization's busy traffic is not one row update
-- per request. Rows are locked minute first, then day, in every call: no deadlock.
create function rate_limit_reserve(
  p_organization uuid,
  p_minute timestamptz,
  p_day timestamptz,
  p_minute_limit integer,
  p_day_limit integer,
  p_want integer
) returns table (granted integer, minute_count integer, day_count integer)
language plpgsql as $$
declare
  m integer;
  d integer;
  g integer;
begin
  insert into rate_limit_windows as w (organization_id, kind, window_start, count)
  values (p_organization, 'minute', p_minute, 0)
  on conflict (organization_id, kind, window_start) do update set count = w.count
  returning w.count into m;
  insert into rate_limit_windows as w (organization_id, kind, window_start, count)
  values (p_organization, 'day', p_day, 0)
  on conflict (organization_id, kind, window_start) do update set count = w.count
  returning w.count into d;
  g := greatest(0, least(p_want, p_minute_limit - m, p_day_limit - d));
  if g > 0 then
    update rate_limit_windows set count = count + g
    where organization_id = p_organization
      and ((kind = 'minute' and window_start = p_minute) or (kind = 'day' and window_start = p_day));
  end if;
  return query select g, m + g, d + g;
end
$$;
