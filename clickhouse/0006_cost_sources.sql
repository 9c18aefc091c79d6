-- How complete a trace's cost is (src/traces/cost/): its cost split by source, and its
-- generation spans left without a price. Both count spans by the same rule as cost_usd, so
-- cost_provided + cost_computed = ifNull(cost_usd, 0). Rows written before this migration
-- carry only sent costs (nothing was computed then): the defaults say so.
ALTER TABLE {{local:traces}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS cost_provided Float64 DEFAULT ifNull(cost_usd, 0) AFTER cost_usd,
  ADD COLUMN IF NOT EXISTS cost_computed Float64 DEFAULT 0 AFTER cost_provided,
  ADD COLUMN IF NOT EXISTS unpriced_spans UInt32 DEFAULT 0 AFTER cost_computed;

ALTER TABLE {{distributed:traces}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS cost_provided Float64 DEFAULT ifNull(cost_usd, 0) AFTER cost_usd,
  ADD COLUMN IF NOT EXISTS cost_computed Float64 DEFAULT 0 AFTER cost_provided,
  ADD COLUMN IF NOT EXISTS unpriced_spans UInt32 DEFAULT 0 AFTER cost_computed;

-- Unpriced spans are listed by model over a time range (GET /api/models/unpriced).
ALTER TABLE {{local:spans}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_cost_source cost_source TYPE set(8) GRANULARITY 4;

-- The views select `*`: recreated so they carry the new columns.
CREATE OR REPLACE VIEW traces_latest {{on_cluster}} AS
SELECT * EXCEPT (is_deleted) FROM traces FINAL WHERE is_deleted = 0;
