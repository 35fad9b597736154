-- gpuprice DuckDB schema, version 5: price_scope ("instance" | "gpu_only") and
-- price_basis ("listed" | "derived" | "floor") on observations and bars, as in
-- ClickHouse (see that migration for their meaning). Earlier rows read "".
ALTER TABLE observations ADD COLUMN IF NOT EXISTS price_scope VARCHAR DEFAULT '';
ALTER TABLE observations ADD COLUMN IF NOT EXISTS price_basis VARCHAR DEFAULT '';
ALTER TABLE bars ADD COLUMN IF NOT EXISTS price_scope VARCHAR DEFAULT '';
ALTER TABLE bars ADD COLUMN IF NOT EXISTS price_basis VARCHAR DEFAULT '';
