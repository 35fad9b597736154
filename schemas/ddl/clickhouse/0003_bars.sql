-- gpuprice ClickHouse schema, version 3: hourly and daily bars per series.
-- Bars are built from deduplicated observations by the store's Rollup (an
-- INSERT … SELECT over the (series, bar) windows it is asked to recompute), never by
-- a materialised view: a view fed on insert would count an identity written twice
-- twice. A recomputed bar is written again with a higher version; reads group by
-- (width, series, bar_start) and take argMax(column, version). Prices are
-- price_usd_gpu_hour. width is the bar's length in seconds (3600 or 86400).
CREATE TABLE IF NOT EXISTS bars (
    width        UInt32,
    bar_start    DateTime('UTC'),
    provider     String,
    sku          String,
    region       String,
    zone         String,
    pricing      String,
    gpu          String,
    tier         String,
    interconnect String,
    open         Float64,
    high         Float64,
    low          Float64,
    close        Float64,
    mean         Float64,
    count        UInt64,
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY (width, toYYYYMM(bar_start))
ORDER BY (width, gpu, pricing, provider, region, sku, zone, bar_start);
