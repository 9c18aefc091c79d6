-- The `dataset_run_items` view of POST /api/sql (src/sql/): one workspace's live run items,
-- the newest row of each (tombstones hidden). Like `sql_scores` (0014) it takes the workspace
-- as a parameter and is read as `sql_dataset_run_items(workspace = '…')`; the endpoint binds it
-- from the caller's key.
CREATE VIEW IF NOT EXISTS sql_dataset_run_items {{on_cluster}} AS
SELECT dataset_id, run_id, run_name, dataset_item_id, trace_id, span_id, output, error, created_at, updated_at
FROM dataset_run_items FINAL
WHERE workspace_id = {workspace:String} AND is_deleted = 0;
