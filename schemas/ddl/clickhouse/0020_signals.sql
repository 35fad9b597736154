-- gpuprice ClickHouse schema, version 20: risk and availability signals as time
-- series (docs/risk.md). One row per fact about an offer at one time: its spot
-- interruption band, its stock, its market's depth, its reliability. Identity
-- (provider, sku, region, zone, kind, effective_at); like observations, reads group
-- by the identity and take argMax(column, version), the last write. source,
-- source_url and run_id say where each row came from.
CREATE TABLE IF NOT EXISTS signals (
    observed_at  DateTime('UTC'),
    effective_at DateTime('UTC'),
    provider     String,
    sku          String,
    region       String,
    zone         String,
    gpu          String,
    kind         String,
    value        Float64,
    label        String,
    source       String,
    source_url   String,
    run_id       String,
    attrs        String,
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(effective_at)
ORDER BY (provider, kind, region, sku, zone, effective_at);
