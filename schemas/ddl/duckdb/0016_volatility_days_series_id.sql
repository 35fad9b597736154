-- gpuprice DuckDB schema, version 16: nothing to change. ClickHouse's version 16
-- stores each volatility_days row's series hash (series_id); DuckDB has no
-- volatility_days. The statement only records the step, so that both backends keep
-- the same versions.
SELECT 1;
