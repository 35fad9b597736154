-- gpuprice DuckDB schema, version 13: nothing to change. ClickHouse's version 13 keeps
-- per-series state of the daily bars (day_series) so that spreads and history read no
-- old history; DuckDB computes them with window functions over its bars (keyed per
-- series and start), and needs no such table. The statement only records the step,
-- so that both backends keep the same versions.
SELECT 1;
