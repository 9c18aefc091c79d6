-- The `scores` view of POST /api/sql (src/sql/): one workspace's live scores, the newest row of
-- each id (tombstones hidden), with the column names of the REST API's fields in snake case.
-- Like the views of migration 0008 it takes the workspace as a parameter and is read as
-- `sql_scores(workspace = '…')`; the endpoint binds it from the caller's key.
CREATE VIEW IF NOT EXISTS sql_scores {{on_cluster}} AS
SELECT id, name, data_type, value, string_value, comment, metadata, source, environment, trace_id, span_id, session_id,
  author_id, config_id, eval_trace_id, timestamp, created_at
FROM scores FINAL
WHERE workspace_id = {workspace:String} AND is_deleted = 0;
