-- Retention per workspace and per environment (docs/decisions/104-retention.md).
--
-- The engine removes rows, by TTL: every table of trace data gets an `expires_at` column
-- whose DEFAULT is computed at insert from the settings below, read through the dictionary
-- `retention_days` (kept in memory by the engine, reloaded by the service after a change and
-- every minute at most). A TTL cannot read a dictionary itself (the engine refuses
-- non-deterministic functions in a TTL), so the date is stored with the row; a changed
-- setting is applied to existing rows by an `ALTER TABLE … UPDATE expires_at` mutation that
-- recomputes the same expression (src/retention/engine-retention.ts), which also rewrites
-- the parts' TTL and drops the expired rows.
--
-- Keys of `retention_settings`: (workspace, environment) for an environment's setting,
-- (workspace, '') for the workspace's own default, ('', '') for the deployment's
-- (LOUPE_RETENTION_DAYS). `days = 0` means kept forever. `longest_days` (on the workspace's
-- row) is the longest retention of any of its environments: tables without an environment
-- column (GenAI log records, the session and user indexes) keep their rows that long, so
-- they never lose a row a span still needs. Each sync from PostgreSQL writes a whole new
-- `generation`; the view reads only the newest one, so a removed setting disappears.
CREATE TABLE IF NOT EXISTS retention_settings {{on_cluster}} (
  workspace_id String,
  environment String,
  days UInt32,
  longest_days UInt32,
  generation UInt64
)
ENGINE = {{engine:ReplacingMergeTree(generation)}}
ORDER BY (workspace_id, environment);

CREATE VIEW IF NOT EXISTS retention_settings_current {{on_cluster}} AS
SELECT workspace_id, environment, days, longest_days
FROM retention_settings FINAL
WHERE generation = (SELECT max(generation) FROM retention_settings);

CREATE DICTIONARY IF NOT EXISTS retention_days {{on_cluster}} (
  workspace_id String,
  environment String,
  days UInt32,
  longest_days UInt32
)
PRIMARY KEY workspace_id, environment
SOURCE(CLICKHOUSE(TABLE 'retention_settings_current'))
LAYOUT(COMPLEX_KEY_HASHED())
LIFETIME(MIN 30 MAX 60);

-- A row's expiry: its time plus its workspace's and environment's retention (0 = forever:
-- the latest date the type holds). The service's UPDATE repeats these expressions
-- (src/retention/engine-retention.ts): keep them equal. A tombstone (is_deleted = 1) may lack
-- its row's environment, so it is kept for the workspace's longest retention: it never
-- expires before the row it hides.

ALTER TABLE {{local:spans}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{distributed:spans}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{local:spans}} {{on_cluster}} MODIFY TTL expires_at;

ALTER TABLE {{local:traces}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{distributed:traces}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{local:traces}} {{on_cluster}} MODIFY TTL expires_at;

ALTER TABLE {{local:scores}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(timestamp, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{distributed:scores}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(timestamp, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{local:scores}} {{on_cluster}} MODIFY TTL expires_at;

ALTER TABLE {{local:genai_log_records}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(time, 0, 'UTC') + toIntervalDay(if((dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))) = 0, 100000, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{distributed:genai_log_records}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(time, 0, 'UTC') + toIntervalDay(if((dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))) = 0, 100000, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{local:genai_log_records}} {{on_cluster}} MODIFY TTL expires_at;

ALTER TABLE {{local:session_traces}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))) = 0, 100000, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{distributed:session_traces}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))) = 0, 100000, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{local:session_traces}} {{on_cluster}} MODIFY TTL expires_at;

ALTER TABLE {{local:user_traces}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))) = 0, 100000, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{distributed:user_traces}} {{on_cluster}} ADD COLUMN IF NOT EXISTS expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))) = 0, 100000, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC');

ALTER TABLE {{local:user_traces}} {{on_cluster}} MODIFY TTL expires_at;
