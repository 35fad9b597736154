-- gpuprice ClickHouse schema, version 14: nothing changes on ClickHouse. The DuckDB
-- migration of this number drops the embedded store's primary key on observations;
-- ReplacingMergeTree has no unique key to maintain. The statement drops a table that
-- no version created (a no-op) so that both backends keep the same versions.
DROP TABLE IF EXISTS observations_unkeyed;
