-- The two views on each insert into `scores` that look rows up, each behind a cheap filter.
--
-- Planning a materialized view's query is paid on every insert, whatever its rows: the look-up
-- of each id's earlier rows (clickhouse/0023's `score_moves_mv`) and the prompt versions' rows
-- of the scores (clickhouse/0025's `prompt_version_scores_of_scores_mv`) cost the engine more
-- than storing the rows (docs/decisions/118-score-inserts-cheaper-for-the-engine.md). Each now
-- reads a Null table that a simple view fills with the rows it can act on; a block of no rows
-- stops there, and the view behind it is not run. They write what they wrote before: the rows
-- left out are rows for which they wrote nothing.

-- 1 when the service generated the score's id as it took the score and is the store's only
-- writer (the embedded engine): no row of the id can have been stored before this one, since a
-- correction names the id only once answered, and goes through the same writer after it.
-- 0 otherwise (an id the client sent, a row from a log written before, another writer).
ALTER TABLE {{local:scores}} {{on_cluster}} ADD COLUMN IF NOT EXISTS fresh_id UInt8 DEFAULT 0;
ALTER TABLE {{distributed:scores}} {{on_cluster}} ADD COLUMN IF NOT EXISTS fresh_id UInt8 DEFAULT 0;

-- Rows of an insert into `scores` that may have another row under another name or trace: all
-- but those marked fresh, and those too when their id has an unmarked row in the same insert
-- (a correction applied with the score it corrects).
CREATE TABLE IF NOT EXISTS scores_to_check {{on_cluster}} (
  workspace_id LowCardinality(String),
  id String,
  name String,
  trace_id String,
  span_id String,
  session_id String,
  data_type LowCardinality(String),
  value Float64,
  string_value String,
  source LowCardinality(String),
  environment LowCardinality(String),
  timestamp DateTime64(6, 'UTC'),
  version UInt64
)
ENGINE = Null;

-- The moved rows, as clickhouse/0023's `score_moves_mv` found them, for those rows: their ids'
-- other rows are the stored ones and the rows above.
CREATE MATERIALIZED VIEW IF NOT EXISTS score_moves_of_checked_mv {{on_cluster}} TO score_moves AS
SELECT n.workspace_id AS workspace_id,
  n.id AS id,
  if(o.version < n.version, o.name, n.name) AS name,
  if(o.version < n.version, o.trace_id, n.trace_id) AS trace_id,
  if(o.version < n.version, o.span_id, n.span_id) AS span_id,
  if(o.version < n.version, o.session_id, n.session_id) AS session_id,
  if(o.version < n.version, o.data_type, n.data_type) AS data_type,
  if(o.version < n.version, o.value, n.value) AS value,
  if(o.version < n.version, o.string_value, n.string_value) AS string_value,
  if(o.version < n.version, o.source, n.source) AS source,
  if(o.version < n.version, o.environment, n.environment) AS environment,
  if(o.version < n.version, o.timestamp, n.timestamp) AS timestamp,
  greatest(o.version, n.version) AS version,
  toUInt8(o.trace_id != n.trace_id) AS moved_trace
FROM scores_to_check AS n
INNER JOIN (
  SELECT workspace_id, id, name, trace_id, span_id, session_id, data_type, value, string_value, source, environment, timestamp, version
  FROM score_summary_stored
  WHERE (workspace_id, id) IN (SELECT workspace_id, id FROM scores_to_check)
  UNION ALL
  SELECT workspace_id, id, name, trace_id, span_id, session_id, data_type, value, string_value, source, environment, timestamp, version
  FROM scores_to_check
) AS o ON o.workspace_id = n.workspace_id AND o.id = n.id
WHERE o.name != n.name OR o.trace_id != n.trace_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS scores_to_check_mv {{on_cluster}} TO scores_to_check AS
SELECT workspace_id, id, name, trace_id, span_id, session_id, data_type, value, string_value, source, environment, timestamp, version
FROM {{local:scores}}
WHERE fresh_id = 0 OR (workspace_id, id) IN (SELECT workspace_id, id FROM {{local:scores}} WHERE fresh_id = 0);

-- The two views above find every move now; the one they replace would find the same again.
DROP VIEW IF EXISTS score_moves_mv {{on_cluster}};

-- Rows of an insert into `score_summary` on a trace that has prompt span rows (live or not):
-- a score on any other trace pairs with no prompt version (until its trace's prompt spans land,
-- whose own view, `prompt_version_scores_of_spans_mv` below, pairs them then).
CREATE TABLE IF NOT EXISTS score_summary_on_prompt_traces {{on_cluster}} (
  workspace_id LowCardinality(String),
  name String,
  trace_id String,
  id String,
  span_id String,
  data_type LowCardinality(String),
  value Float64,
  string_value String,
  environment LowCardinality(String),
  timestamp DateTime64(6, 'UTC'),
  version UInt64,
  is_deleted UInt8
)
ENGINE = Null;

-- clickhouse/0025's `prompt_version_scores_of_scores_mv`, reading those rows alone, and the spans
-- a score was on before from `score_targets` (below).
CREATE MATERIALIZED VIEW IF NOT EXISTS prompt_version_scores_of_prompt_traces_mv {{on_cluster}} TO prompt_version_scores AS
SELECT s.workspace_id AS workspace_id, k.prompt_name AS prompt_name, k.prompt_version AS prompt_version, s.name AS name, s.id AS id,
  s.trace_id AS trace_id, s.span_id AS span_id, s.data_type AS data_type, s.value AS value, s.string_value AS string_value,
  arrayMap(x -> x.2, arrayFilter(x -> s.span_id = '' OR x.1 = s.span_id, k.spans)) AS starts,
  s.environment AS environment, s.timestamp AS timestamp, s.version + k.span_version AS version,
  if(s.is_deleted = 1 OR empty(starts), 1, 0) AS is_deleted
FROM score_summary_on_prompt_traces AS s
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
      WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM score_summary_on_prompt_traces)
      GROUP BY workspace_id, trace_id, span_id)
    GROUP BY workspace_id, trace_id)
  ARRAY JOIN all_keys AS key
) AS k ON k.workspace_id = s.workspace_id AND k.trace_id = s.trace_id
LEFT JOIN (
  SELECT workspace_id, trace_id, id, groupUniqArray(span_id) AS past_spans
  FROM score_targets
  WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM score_summary_on_prompt_traces)
  GROUP BY workspace_id, trace_id, id
) AS h ON h.workspace_id = s.workspace_id AND h.trace_id = s.trace_id AND h.id = s.id
WHERE s.span_id = '' OR arrayExists(x -> (x.1 = s.span_id OR has(h.past_spans, x.1)) AND has(x.2, (k.prompt_name, k.prompt_version)),
  k.span_keys);

CREATE MATERIALIZED VIEW IF NOT EXISTS score_summary_on_prompt_traces_mv {{on_cluster}} TO score_summary_on_prompt_traces AS
SELECT workspace_id, name, trace_id, id, span_id, data_type, value, string_value, environment, timestamp, version, is_deleted
FROM {{local:score_summary}}
WHERE trace_id != ''
  AND (workspace_id, trace_id) IN (
    SELECT workspace_id, trace_id FROM prompt_spans_stored
    WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM {{local:score_summary}}));

-- The view above feeds the one before it; the one they replace would write the same rows again.
DROP VIEW IF EXISTS prompt_version_scores_of_scores_mv {{on_cluster}};

-- `scores_by_trace` (clickhouse/0025) copied every score row by trace for the two views above and
-- below; `score_targets` (clickhouse/0023) holds the same scores by trace, its rows keyed by
-- (trace, id) rather than (trace, name, id), and every insert paid for the copy. The views read
-- `score_targets` now: a score's latest row per id (its name from that row), the spans it was on
-- under any name.
DROP VIEW IF EXISTS scores_by_trace_mv {{on_cluster}};

-- Prompt span rows land: clickhouse/0025's `prompt_version_scores_of_spans_mv`, the scores of
-- their traces read from `score_targets`. The inserted rows come first in FROM: a materialized
-- view is fed by the first table it reads.
CREATE MATERIALIZED VIEW IF NOT EXISTS prompt_version_scores_of_prompt_spans_mv {{on_cluster}} TO prompt_version_scores AS
SELECT s.workspace_id AS workspace_id, k.prompt_name AS prompt_name, k.prompt_version AS prompt_version, s.score_name AS name,
  s.id AS id, s.trace_id AS trace_id, s.score_span AS span_id, s.score_type AS data_type, s.score_value AS value,
  s.score_label AS string_value, arrayMap(x -> x.2, arrayFilter(x -> s.score_span = '' OR x.1 = s.score_span, k.spans)) AS starts,
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
  SELECT workspace_id, trace_id, id, argMax(name, version) AS score_name, argMax(span_id, version) AS score_span,
    argMax(data_type, version) AS score_type, argMax(value, version) AS score_value, argMax(string_value, version) AS score_label,
    argMax(environment, version) AS score_environment, argMax(timestamp, version) AS score_time, max(version) AS score_version,
    argMax(is_deleted, version) AS deleted, groupUniqArray(span_id) AS past_spans
  FROM score_targets
  WHERE (workspace_id, trace_id) IN (SELECT workspace_id, trace_id FROM {{local:prompt_spans}})
  GROUP BY workspace_id, trace_id, id
  HAVING deleted = 0
) AS s ON s.workspace_id = b.workspace_id AND s.trace_id = b.trace_id
WHERE s.score_span = '' OR arrayExists(x -> has(s.past_spans, x.1) AND has(x.2, (k.prompt_name, k.prompt_version)), k.span_keys);

DROP VIEW IF EXISTS prompt_version_scores_of_spans_mv {{on_cluster}};
DROP VIEW IF EXISTS scores_by_trace_stored {{on_cluster}};
DROP TABLE IF EXISTS scores_by_trace {{on_cluster}};
