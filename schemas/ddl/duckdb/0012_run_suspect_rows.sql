-- gpuprice DuckDB schema, version 12: runs.rows_suspect, as in ClickHouse (see that
-- migration): the quarantined rows the relative gate held as suspect. Earlier records
-- read 0.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS rows_suspect BIGINT DEFAULT 0;
