-- gpuprice ClickHouse schema, version 2: daily FX rates.
-- Identity (currency, date); the last write wins: reads group by the identity and
-- take argMax(column, version), as for observations.
CREATE TABLE IF NOT EXISTS fx_rates (
    date         Date,
    currency     String,
    usd_per_unit Float64,
    source       String,
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (currency, date);
