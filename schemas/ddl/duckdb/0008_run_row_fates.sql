-- gpuprice DuckDB schema, version 8: rows_stored, rows_spooled and rows_lost on run
-- records, as in ClickHouse (see that migration). Earlier records read 0.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS rows_stored BIGINT DEFAULT 0;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS rows_spooled BIGINT DEFAULT 0;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS rows_lost BIGINT DEFAULT 0;
