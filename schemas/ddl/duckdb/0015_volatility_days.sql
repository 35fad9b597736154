-- gpuprice DuckDB schema, version 15: nothing to change. ClickHouse's version 15 keeps
-- a per-series, per-day summary of the hourly bars (volatility_days) so that
-- volatility reads about 30 rows per series; DuckDB computes volatility with window
-- functions over its bars and needs no such table. The statement only records the
-- step, so that both backends keep the same versions.
SELECT 1;
