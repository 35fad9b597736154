-- gpuprice DuckDB schema, version 19: runs.owner, span_since and span_until, as in
-- ClickHouse (see that migration): a run is recorded as started before its rows
-- are written, with the process that runs it and the span of effective_at it
-- began to write, so that a killed run's bars can be rebuilt. Earlier records
-- read '' and 0.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS owner VARCHAR DEFAULT '';
ALTER TABLE runs ADD COLUMN IF NOT EXISTS span_since BIGINT DEFAULT 0;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS span_until BIGINT DEFAULT 0;
