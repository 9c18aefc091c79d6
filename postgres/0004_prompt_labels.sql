-- Labels: a name (production, staging, …) that points at exactly one version of a prompt.
-- The primary key (group, label) is what holds "one holder per label" against any code and
-- any number of concurrent movers; a version may carry several labels. `latest` is the
-- is_latest flag of the versions and is never stored here.

-- Target of the labels' composite key: a label can only point at a version of its own group.
alter table prompts add constraint prompts_id_group unique (id, prompt_group_id);

create table prompt_labels (
  prompt_group_id uuid not null references prompt_groups (id) on delete cascade,
  label text not null check (label ~ '^[a-z0-9_.-]{1,64}$' and label <> 'latest'),
  prompt_id integer not null,
  moved_at timestamptz not null default now(),
  primary key (prompt_group_id, label),
  foreign key (prompt_id, prompt_group_id) references prompts (id, prompt_group_id) on delete cascade
);
-- The labels of one record (the `labels` of every read).
create index prompt_labels_prompt on prompt_labels (prompt_id);

-- Every move, kept for GET /api/prompt/:id/label-history. Version ids and numbers are copied:
-- versions are only ever removed with their whole prompt, which removes this history too.
create table prompt_label_moves (
  id bigint generated always as identity primary key,
  prompt_group_id uuid not null references prompt_groups (id) on delete cascade,
  label text not null,
  from_prompt_id integer,
  from_version text,
  -- null: the label was removed.
  to_prompt_id integer,
  to_version text,
  -- The credential that moved it: an API key (and its user, for user-scoped keys) or an OAuth user.
  moved_by_key_id uuid,
  moved_by_user_id uuid,
  moved_at timestamptz not null default clock_timestamp(),
  check (from_prompt_id is not null or to_prompt_id is not null)
);
create index prompt_label_moves_group on prompt_label_moves (prompt_group_id, id);
