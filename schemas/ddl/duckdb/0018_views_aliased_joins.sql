-- gpuprice DuckDB schema, version 18: nothing to change. ClickHouse's version 18
-- recreates its views v_latest and v_day_prices with aliased joined subqueries
-- (current ClickHouse requires them); DuckDB's views never had the problem. The
-- statement only records the step, so that both backends keep the same versions.
SELECT 1;
