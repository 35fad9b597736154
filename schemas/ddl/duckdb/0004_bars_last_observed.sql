-- gpuprice DuckDB schema, version 4: each bar keeps last_observed_at, the latest
-- observed_at among the observations of the bar, as in ClickHouse. Bars rolled up
-- before this version hold NULL (unknown) until a rollup rebuilds them.
ALTER TABLE bars ADD COLUMN IF NOT EXISTS last_observed_at TIMESTAMP;
