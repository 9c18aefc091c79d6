-- Span attributes and metadata as maps, so `attributes['gen_ai.request.model']` reads one map
-- column instead of parsing the span's JSON. Keys stay as sent; string values are stored as
-- they are, any other value (number, boolean, null, object, array) as its JSON text. The
-- ingest writes both maps (src/traces/rows.ts stringMapOf); the DEFAULT computes the same maps
-- from `detail` for rows written without them, and MATERIALIZE writes them for older rows.
ALTER TABLE {{local:spans}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS attributes_map Map(LowCardinality(String), String)
    DEFAULT CAST(arrayMap(kv -> (kv.1, if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
      JSONExtractKeysAndValuesRaw(detail, 'attributes')), 'Map(LowCardinality(String), String)') AFTER detail,
  ADD COLUMN IF NOT EXISTS metadata_map Map(LowCardinality(String), String)
    DEFAULT CAST(arrayMap(kv -> (kv.1, if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
      JSONExtractKeysAndValuesRaw(detail, 'metadata')), 'Map(LowCardinality(String), String)') AFTER attributes_map;

ALTER TABLE {{distributed:spans}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS attributes_map Map(LowCardinality(String), String) AFTER detail,
  ADD COLUMN IF NOT EXISTS metadata_map Map(LowCardinality(String), String) AFTER attributes_map;

ALTER TABLE {{local:spans}} {{on_cluster}} MATERIALIZE COLUMN attributes_map SETTINGS mutations_sync = 2;

ALTER TABLE {{local:spans}} {{on_cluster}} MATERIALIZE COLUMN metadata_map SETTINGS mutations_sync = 2;

-- The views of POST /api/sql (src/sql/): one workspace's live rows, deduplicated, with stable
-- column names. They take the workspace as a parameter, so they can only be read as
-- `sql_spans(workspace = '…')`; the endpoint binds it from the caller's key and lets the
-- caller name them `spans` and `traces` (clickhouse/README.md, "SQL endpoint").
CREATE VIEW IF NOT EXISTS sql_spans {{on_cluster}} AS
SELECT trace_id, span_id, parent_span_id, name, kind, status, status_message, start_time, end_time, duration_ms, ttft_ms,
  model, provider, input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
  cost_usd, cost_source, prompt_name, prompt_version,
  attributes_map AS attributes, metadata_map AS metadata, input, output, events,
  trace_name, session_id, user_id, tags, service, source, environment
FROM spans FINAL
WHERE workspace_id = {workspace:String} AND is_deleted = 0;

CREATE VIEW IF NOT EXISTS sql_traces {{on_cluster}} AS
SELECT trace_id, name, session_id, user_id, tags, service, source, environment, status, trace_kind, start_time, end_time,
  duration_ms, model, provider, input_tokens, output_tokens, total_tokens, cost_usd, span_count, error_count
FROM traces FINAL
WHERE workspace_id = {workspace:String} AND is_deleted = 0;

-- Sessions and users: one row each, from the workspace's live trace summaries, with the figures
-- of GET /api/sessions and GET /api/users (src/traces/sessions/queries.ts).
CREATE VIEW IF NOT EXISTS sql_sessions {{on_cluster}} AS
SELECT session_id, count() AS trace_count, min(start_time) AS first_start_time, max(end_time) AS last_end_time,
  (toUnixTimestamp64Micro(max(end_time)) - toUnixTimestamp64Micro(min(start_time))) / 1000 AS duration_ms,
  arraySort(groupUniqArrayIf(user_id, user_id != '')) AS user_ids,
  sum(ifNull(input_tokens, 0)) AS input_tokens, sum(ifNull(output_tokens, 0)) AS output_tokens,
  sum(ifNull(total_tokens, 0)) AS total_tokens, sum(ifNull(cost_usd, 0)) AS cost_usd,
  sum(error_count) AS error_count, countIf(status = 'error') AS trace_error_count
FROM traces FINAL
WHERE workspace_id = {workspace:String} AND is_deleted = 0 AND session_id != ''
GROUP BY session_id;

CREATE VIEW IF NOT EXISTS sql_users {{on_cluster}} AS
SELECT user_id, count() AS trace_count, uniqExactIf(session_id, session_id != '') AS session_count,
  sum(ifNull(input_tokens, 0)) AS input_tokens, sum(ifNull(output_tokens, 0)) AS output_tokens,
  sum(ifNull(total_tokens, 0)) AS total_tokens, sum(ifNull(cost_usd, 0)) AS cost_usd,
  sum(error_count) AS error_count, countIf(status = 'error') AS trace_error_count,
  min(start_time) AS first_seen, max(ifNull(end_time, start_time)) AS last_seen
FROM traces FINAL
WHERE workspace_id = {workspace:String} AND is_deleted = 0 AND user_id != ''
GROUP BY user_id;
