-- gpuprice ClickHouse schema, version 21: nothing to change. DuckDB's version 21
-- creates the volatility_days that ClickHouse has kept since version 15. The
-- statement only records the step, so that both backends keep the same versions
-- (on a cluster it runs nowhere).
SELECT 1;
