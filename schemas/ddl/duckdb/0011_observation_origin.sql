-- gpuprice DuckDB schema, version 11: observations.origin, as in ClickHouse (see
-- that migration): "" for a collected or imported price, "recorded" for a row of a
-- recorded example archive. Earlier rows read "".
ALTER TABLE observations ADD COLUMN IF NOT EXISTS origin VARCHAR DEFAULT '';
