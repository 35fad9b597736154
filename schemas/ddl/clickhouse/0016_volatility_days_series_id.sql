-- gpuprice ClickHouse schema, version 16: volatility_days.series_id, the 64-bit hash
-- of a row's series (provider, sku, region, zone, pricing), as bars.series_id
-- (version 13): the volatility read (docs/analytics.md, "Volatility on ClickHouse")
-- fetches the numbers of about 30 rows per series with the series as one number,
-- and the names once per series. The store runs OPTIMIZE … FINAL when this version
-- is applied on one server, so that the rows already written store it; parts written
-- before compute it when read until a merge does.
ALTER TABLE volatility_days ADD COLUMN series_id UInt64 MATERIALIZED cityHash64(provider, sku, region, zone, pricing);
