-- Run items are mirrored into ClickHouse (clickhouse/0017) so that POST /api/sql can join them
-- with spans and scores (docs/decisions/106-run-items-for-sql.md). A run item's `version`
-- orders its writes (the engine keeps the highest); the outbox lists what is still to be
-- written there: an entry is added in the transaction of the change and removed once the
-- engine has it, so a change PostgreSQL committed is never lost when the engine's write fails
-- (the entry is sent again by the next write of the workspace's run items, or at start-up).
create sequence dataset_run_items_version;

alter table dataset_run_items add column version bigint not null default nextval('dataset_run_items_version');

create table dataset_run_items_outbox (
  id bigint generated always as identity primary key,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  -- No reference: the entry of a deleted run outlives the run.
  run_id uuid not null,
  -- The run items to write (null: all of the run's); for a deletion, the items to hide.
  dataset_item_ids text[],
  -- Set for a deletion: the version of the tombstones, above every version the items had.
  deleted_version bigint,
  created_at timestamptz not null default now()
);

create index dataset_run_items_outbox_workspace on dataset_run_items_outbox (workspace_id, id);

-- The runs that exist now are written on the first flush.
insert into dataset_run_items_outbox (workspace_id, run_id, dataset_item_ids)
select d.workspace_id, r.id, null from dataset_runs r join datasets d on d.id = r.dataset_id;
