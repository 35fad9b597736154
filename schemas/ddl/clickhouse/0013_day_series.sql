-- gpuprice ClickHouse schema, version 13: what 30-day spreads and history read
-- without scanning all history or strings (docs/analytics.md, "On ClickHouse").
--
-- bars.series_id and bars.attrs_id are 64-bit hashes of a bar's series (provider,
-- sku, region, zone, pricing) and attributes (gpu, tier, interconnect, price_scope,
-- price_basis), stored when a bar is written: a read of daily bars fetches numbers
-- only and names them from day_series. Parts written before this version compute
-- them when read until a merge (or OPTIMIZE TABLE bars FINAL) stores them.
ALTER TABLE bars ADD COLUMN series_id UInt64 MATERIALIZED cityHash64(provider, sku, region, zone, pricing);
ALTER TABLE bars ADD COLUMN attrs_id UInt64 MATERIALIZED cityHash64(gpu, tier, interconnect, price_scope, price_basis);
-- day_series: per series, the state of its daily bars, kept by the store's Rollup
-- (each rollup adds the states of the daily bars it wrote; merges combine them):
--   first_start  the earliest daily bar_start;
--   last_bar     the last version of the latest daily bar (bar_start, gpu, tier,
--                interconnect, open, high, low, close, mean, count,
--                last_observed_at, price_scope, price_basis), by (bar_start, version):
--                the bar carried into a window that opens after it, read per series
--                instead of from every older bar;
--   attrs        every (attrs_id, gpu, tier, interconnect, price_scope, price_basis)
--                any version of its daily bars had: the names of attrs_id.
-- Read with minMerge, argMaxMerge and groupUniqArrayMerge, GROUP BY the series.
CREATE TABLE IF NOT EXISTS day_series (
    provider    String,
    sku         String,
    region      String,
    zone        String,
    pricing     String,
    first_start AggregateFunction(min, DateTime('UTC')),
    last_bar    AggregateFunction(argMax, Tuple(DateTime('UTC'), String, String, String, Float64, Float64, Float64, Float64, Float64, UInt64, DateTime('UTC'), String, String), Tuple(DateTime('UTC'), UInt64)),
    attrs       AggregateFunction(groupUniqArray, Tuple(UInt64, String, String, String, String, String))
) ENGINE = AggregatingMergeTree()
ORDER BY (provider, sku, region, zone, pricing);
-- The states of the daily bars already built (run again after an interruption, it
-- adds the same states: the merged figures do not change).
INSERT INTO day_series (provider, sku, region, zone, pricing, first_start, last_bar, attrs)
SELECT provider, sku, region, zone, pricing, minState(bar_start),
    argMaxState((bar_start, gpu, tier, interconnect, open, high, low, close, mean, count, last_observed_at, price_scope, price_basis), (bar_start, version)),
    groupUniqArrayState((attrs_id, gpu, tier, interconnect, price_scope, price_basis))
FROM bars
WHERE width = 86400
GROUP BY provider, sku, region, zone, pricing;
