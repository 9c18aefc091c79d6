-- The scores of each prompt version, kept as the spans and the scores land, so comparing two
-- versions (GET /api/prompt/:id/compare) and the score means per version read the rows of those
-- versions alone instead of joining every score of the workspace to the prompt's spans.
--
-- Three tables and three views keep it:
-- - `prompt_spans`: each span that names a prompt (and any span whose row was such a span before,
--   and every tombstone), narrow, by trace: the prompt (name, version) of each span, its start;
-- - `scores_by_trace`: every row of `score_summary` by trace (tombstones and the moved corrections'
--   tombstones included), so the scores of a trace are a range of the key;
-- - `prompt_version_scores`: per prompt version and live score on a span of that version or on a
--   trace holding one, a row with the score's value and the start times of the spans it counts
--   through (a trace score counts once per version, however many of its spans the trace holds).
-- A row of `prompt_version_scores` is recomputed whole from the latest state of its score and of
-- its trace's prompt spans whenever either lands: a score row (view on `score_summary`) reads its
-- trace's prompt spans; a prompt span row (view on `prompt_spans`) reads its trace's scores, so a
-- score sent before its trace counts once the trace lands. Its version is the score's plus the
-- highest version of the trace's prompt span rows: it grows with either side, so the newest
-- state wins (ReplacingMergeTree), and a pair that no longer holds (the score deleted or moved,
-- the span deleted or moved to another version) is written as a tombstone. A score on a span is
-- paired only with the versions its span, or a span it was on before, has named: the scores of
-- a trace's other spans write nothing. Read with FINAL.
CREATE TABLE IF NOT EXISTS prompt_spans {{on_cluster}} (
  workspace_id LowCardinality(String),
  trace_id String,
  span_id String,
  prompt_name String,                         -- '' for a tombstone, or a span that no longer names a prompt
  prompt_version String,
  start_time DateTime64(6, 'UTC'),
  environment LowCardinality(String),
  version UInt64,
  is_deleted UInt8 DEFAULT 0,
  -- Retention as `spans` (clickhouse/0016_retention.sql, src/retention/engine-retention.ts).
  expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(start_time, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC')
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, trace_id, span_id)
TTL expires_at
{{shard:sipHash64(trace_id)}}
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS scores_by_trace {{on_cluster}} (
  workspace_id LowCardinality(String),
  trace_id String,
  name String,
  id String,
  span_id String,
  data_type LowCardinality(String),
  value Float64,
  string_value String,
  environment LowCardinality(String),
  timestamp DateTime64(6, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0,
  -- Retention as `scores`.
  expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(timestamp, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC')
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, trace_id, name, id)
TTL expires_at
{{shard:sipHash64(trace_id)}}
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS prompt_version_scores {{on_cluster}} (
  workspace_id LowCardinality(String),
  prompt_name String,
  prompt_version String,
  name String,
  id String,
  trace_id String,
  span_id String,                             -- the score's span; '' for a trace score
  data_type LowCardinality(String),
  value Float64,
  string_value String,
  starts Array(DateTime64(6, 'UTC')),         -- the start of each live span of the version the score counts through
  environment LowCardinality(String),
  timestamp DateTime64(6, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0,
  -- Retention as `scores` (the score's time and environment).
  expires_at DateTime('UTC') DEFAULT toDateTime(least(toDateTime64(timestamp, 0, 'UTC') + toIntervalDay(if((if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0)))))) = 0, 100000, if(is_deleted = 1, dictGetOrDefault('retention_days', 'longest_days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))), dictGetOrDefault('retention_days', 'days', (workspace_id, environment), dictGetOrDefault('retention_days', 'days', (workspace_id, ''), dictGetOrDefault('retention_days', 'days', ('', ''), toUInt32(0))))))), toDateTime64('2106-01-01 00:00:00', 0, 'UTC')), 'UTC')
)
ENGINE = {{engine:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (workspace_id, prompt_name, prompt_version, name, id)
TTL expires_at
{{shard:sipHash64(trace_id)}}
SETTINGS index_granularity = 1024;

-- The stored rows of `prompt_spans` and of `scores_by_trace`: inside a materialized view on a
-- table, its name means the rows being inserted.
CREATE VIEW IF NOT EXISTS prompt_spans_stored {{on_cluster}} AS
SELECT workspace_id, trace_id, span_id, prompt_name, prompt_version, start_time, version, is_deleted FROM prompt_spans;

CREATE VIEW IF NOT EXISTS scores_by_trace_stored {{on_cluster}} AS
SELECT workspace_id, trace_id, name, id, span_id, data_type, value, string_value, environment, timestamp, version, is_deleted
FROM scores_by_trace;

-- The spans that name a prompt, every tombstone, and any span of a trace whose stored row named a
-- prompt (a re-send that names none, or another, takes its span out of its old version).
CREATE MATERIALIZED VIEW IF NOT EXISTS prompt_spans_mv {{on_cluster}} TO {{local:prompt_spans}} AS
SELECT workspace_id, trace_id, span_id, prompt_name, prompt_version, start_time, environment, version, is_deleted
FROM {{local:spans}}
WHERE prompt_name != '' OR is_deleted = 1
  OR (workspace_id, trace_id, span_id) IN (
    SELECT workspace_id, trace_id, span_id FROM prompt_spans_stored
    WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM {{local:spans}}));

-- Every row of `score_summary` on a trace, by trace.
CREATE MATERIALIZED VIEW IF NOT EXISTS scores_by_trace_mv {{on_cluster}} TO scores_by_trace AS
SELECT workspace_id, trace_id, name, id, span_id, data_type, value, string_value, environment, timestamp, version, is_deleted
FROM {{local:score_summary}}
WHERE trace_id != '';

-- A score row lands: its rows per prompt version of its trace, from the trace's stored prompt spans.
-- The spans a score was on before are read only for traces with prompt spans (the others pair nothing).
CREATE MATERIALIZED VIEW IF NOT EXISTS prompt_version_scores_of_scores_mv {{on_cluster}} TO prompt_version_scores AS
SELECT s.workspace_id AS workspace_id, k.prompt_name AS prompt_name, k.prompt_version AS prompt_version, s.name AS name, s.id AS id,
  s.trace_id AS trace_id, s.span_id AS span_id, s.data_type AS data_type, s.value AS value, s.string_value AS string_value,
  arrayMap(x -> x.2, arrayFilter(x -> s.span_id = '' OR x.1 = s.span_id, k.spans)) AS starts,
  s.environment AS environment, s.timestamp AS timestamp, s.version + k.span_version AS version,
  if(s.is_deleted = 1 OR empty(starts), 1, 0) AS is_deleted
FROM {{local:score_summary}} AS s
INNER JOIN (
  SELECT workspace_id, trace_id, key.1 AS prompt_name, key.2 AS prompt_version,
    arrayMap(x -> (x.1, x.2), arrayFilter(x -> x.3 = key.1 AND x.4 = key.2, live)) AS spans, span_version, span_keys
  FROM (
    SELECT workspace_id, trace_id, arrayDistinct(arrayFlatten(groupArray(keys))) AS all_keys,
      groupArrayIf((span_id, start, prompt, pversion), deleted = 0 AND prompt != '') AS live, max(last) AS span_version,
      groupArray((span_id, keys)) AS span_keys
    FROM (
      SELECT workspace_id, trace_id, span_id, argMax(prompt_name, version) AS prompt, argMax(prompt_version, version) AS pversion,
        argMax(start_time, version) AS start, argMax(is_deleted, version) AS deleted, max(version) AS last,
        groupUniqArrayIf((prompt_name, prompt_version), prompt_name != '') AS keys
      FROM prompt_spans_stored
      WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM {{local:score_summary}})
      GROUP BY workspace_id, trace_id, span_id)
    GROUP BY workspace_id, trace_id)
  ARRAY JOIN all_keys AS key
) AS k ON k.workspace_id = s.workspace_id AND k.trace_id = s.trace_id
LEFT JOIN (
  SELECT workspace_id, trace_id, name, id, groupUniqArray(span_id) AS past_spans
  FROM scores_by_trace_stored
  WHERE (workspace_id, trace_id) IN (
    SELECT workspace_id, trace_id FROM prompt_spans_stored
    WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM {{local:score_summary}}))
  GROUP BY workspace_id, trace_id, name, id
) AS h ON h.workspace_id = s.workspace_id AND h.trace_id = s.trace_id AND h.name = s.name AND h.id = s.id
WHERE s.trace_id != ''
  AND (s.span_id = '' OR arrayExists(x -> (x.1 = s.span_id OR has(h.past_spans, x.1)) AND has(x.2, (k.prompt_name, k.prompt_version)),
    k.span_keys));

-- Prompt span rows land: the rows of every score of their traces (the scores' latest rows), per
-- prompt version the traces' spans have named, from the stored prompt spans and these. The
-- inserted rows come first in FROM: a materialized view is fed by the first table it reads.
CREATE MATERIALIZED VIEW IF NOT EXISTS prompt_version_scores_of_spans_mv {{on_cluster}} TO prompt_version_scores AS
SELECT s.workspace_id AS workspace_id, k.prompt_name AS prompt_name, k.prompt_version AS prompt_version, s.name AS name, s.id AS id,
  s.trace_id AS trace_id, s.score_span AS span_id, s.score_type AS data_type, s.score_value AS value, s.score_label AS string_value,
  arrayMap(x -> x.2, arrayFilter(x -> s.score_span = '' OR x.1 = s.score_span, k.spans)) AS starts,
  s.score_environment AS environment, s.score_time AS timestamp, s.score_version + k.span_version AS version,
  if(empty(starts), 1, 0) AS is_deleted
FROM (SELECT DISTINCT workspace_id, trace_id FROM {{local:prompt_spans}}) AS b
INNER JOIN (
  SELECT workspace_id, trace_id, key.1 AS prompt_name, key.2 AS prompt_version,
    arrayMap(x -> (x.1, x.2), arrayFilter(x -> x.3 = key.1 AND x.4 = key.2, live)) AS spans, span_version, span_keys
  FROM (
    SELECT workspace_id, trace_id, arrayDistinct(arrayFlatten(groupArray(keys))) AS all_keys,
      groupArrayIf((span_id, start, prompt, pversion), deleted = 0 AND prompt != '') AS live, max(last) AS span_version,
      groupArray((span_id, keys)) AS span_keys
    FROM (
      SELECT workspace_id, trace_id, span_id, argMax(prompt_name, version) AS prompt, argMax(prompt_version, version) AS pversion,
        argMax(start_time, version) AS start, argMax(is_deleted, version) AS deleted, max(version) AS last,
        groupUniqArrayIf((prompt_name, prompt_version), prompt_name != '') AS keys
      FROM (
        SELECT workspace_id, trace_id, span_id, prompt_name, prompt_version, start_time, version, is_deleted
        FROM prompt_spans_stored
        WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM {{local:prompt_spans}})
        UNION ALL
        SELECT workspace_id, trace_id, span_id, prompt_name, prompt_version, start_time, version, is_deleted FROM {{local:prompt_spans}})
      GROUP BY workspace_id, trace_id, span_id)
    GROUP BY workspace_id, trace_id)
  ARRAY JOIN all_keys AS key
) AS k ON k.workspace_id = b.workspace_id AND k.trace_id = b.trace_id
INNER JOIN (
  SELECT workspace_id, trace_id, name, id, argMax(span_id, version) AS score_span, argMax(data_type, version) AS score_type,
    argMax(value, version) AS score_value, argMax(string_value, version) AS score_label, argMax(environment, version) AS score_environment,
    argMax(timestamp, version) AS score_time, max(version) AS score_version, argMax(is_deleted, version) AS deleted,
    groupUniqArray(span_id) AS past_spans
  FROM scores_by_trace_stored
  WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM {{local:prompt_spans}})
  GROUP BY workspace_id, trace_id, name, id
  HAVING deleted = 0
) AS s ON s.workspace_id = b.workspace_id AND s.trace_id = b.trace_id
WHERE s.score_span = '' OR arrayExists(x -> has(s.past_spans, x.1) AND has(x.2, (k.prompt_name, k.prompt_version)), k.span_keys);

-- What is stored already: the scores by trace first, then the prompt spans, whose view above
-- writes the versions' rows.
INSERT INTO scores_by_trace (workspace_id, trace_id, name, id, span_id, data_type, value, string_value, environment, timestamp, version,
  is_deleted)
SELECT workspace_id, trace_id, name, id, span_id, data_type, value, string_value, environment, timestamp, version, 0
FROM score_summary FINAL
WHERE trace_id != '' AND is_deleted = 0;

INSERT INTO prompt_spans (workspace_id, trace_id, span_id, prompt_name, prompt_version, start_time, environment, version, is_deleted)
SELECT workspace_id, trace_id, span_id, prompt_name, prompt_version, start_time, environment, version, 0
FROM spans FINAL
WHERE prompt_name != '' AND is_deleted = 0;
