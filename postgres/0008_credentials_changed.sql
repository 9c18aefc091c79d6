-- Replicas keep the API keys they authenticated in memory (src/tenancy/credential-cache.ts)
-- and LISTEN on loupe_credentials: any change to what authentication reads of a key or its
-- organization, by the service, the CLI or an operator's own SQL, tells every replica at
-- commit to read them again. Refreshing last_used_at, the one column written on the request
-- path, tells no one.
create function loupe_credentials_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('loupe_credentials', tg_table_name);
  return null;
end
$$;

create trigger api_keys_credentials_changed
  after update of scope, organization_id, workspace_id, user_id, prefix, hash, revoked_at or delete on api_keys
  for each statement execute function loupe_credentials_changed();

create trigger organizations_credentials_changed
  after update of plan, rate_limit_per_minute, rate_limit_per_day or delete on organizations
  for each statement execute function loupe_credentials_changed();
