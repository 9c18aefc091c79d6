-- Replicas keep a workspace's score configs in memory (src/scores/service/config-cache.ts), so
-- score ingest validates without a round trip, and LISTEN on loupe_score_configs: any change
-- to score_configs, by the service, the CLI or an operator's own SQL, tells every replica at
-- commit to read them again.
create function loupe_score_configs_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('loupe_score_configs', '');
  return null;
end
$$;

create trigger score_configs_changed
  after insert or update or delete or truncate on score_configs
  for each statement execute function loupe_score_configs_changed();
