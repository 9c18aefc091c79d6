-- A model connection's calls per minute counted for every service instance at once: a token
-- bucket per connection (capacity `requests_per_minute`, refilled at that rate), taken from by
-- one statement a call (src/evaluators/tables/connection-calls-table.ts). Times are the
-- caller's clock in milliseconds since the epoch.
create table model_connection_calls (
  connection_id uuid primary key references model_connections (id) on delete cascade,
  tokens double precision not null,
  updated_ms bigint not null
);
