-- gpuprice DuckDB schema, version 17: runs.rows_not_offered, as in ClickHouse (see
-- that migration): the rows the source said are not offered, counted, neither
-- stored nor quarantined. Earlier records read 0.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS rows_not_offered BIGINT DEFAULT 0;
