-- gpuprice ClickHouse schema, version 1.
-- Written for ClickHouse 18.16 up to 24.x and later: no LowCardinality, Nullable, TTL,
-- CODEC, DateTime64, Map or JSON types. Times are DateTime('UTC'), whole seconds.

-- Applied migrations. The migrator reads it, so every migration records itself here.
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    UInt32,
    name       String,
    applied_at DateTime('UTC')
) ENGINE = MergeTree()
ORDER BY version;

-- One price for one SKU, at one place, of one pricing kind, at one time.
-- Identity: (provider, sku, region, zone, pricing, effective_at); gpu derives from sku,
-- so the sort key below keeps one row per identity once parts merge. Merges are
-- eventual: every read groups by the identity and takes argMax(column, version), the
-- last write. version is the writer's clock in nanoseconds plus the row's position in
-- its batch.
CREATE TABLE IF NOT EXISTS observations (
    observed_at        DateTime('UTC'),
    effective_at       DateTime('UTC'),
    provider           String,
    tier               String,
    sku                String,
    region             String,
    zone               String,
    gpu                String,
    gpu_name           String,
    gpu_count          Float64,
    gpu_memory_gb      Float64,
    pricing            String,
    price_usd_hour     Float64,
    price_usd_gpu_hour Float64,
    currency           String,
    price_native       Float64,
    unit               String,
    fx_rate            Float64,
    interconnect       String,
    source_kind        String,
    source_url         String,
    run_id             String,
    attrs              String,
    version            UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(effective_at)
ORDER BY (provider, gpu, pricing, region, sku, zone, effective_at);

-- One source's part in one collection run. Identity (run_id, source); last write wins.
CREATE TABLE IF NOT EXISTS runs (
    run_id           String,
    source           String,
    started_at       DateTime('UTC'),
    finished_at      DateTime('UTC'),
    status           String,
    rows_accepted    Int64,
    rows_quarantined Int64,
    unknown_gpus     Int64,
    error            String,
    version          UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (source, run_id);

-- Rows that failed validation, kept with the reason. An append-only log.
CREATE TABLE IF NOT EXISTS quarantine (
    quarantined_at DateTime('UTC'),
    run_id         String,
    source         String,
    reason         String,
    raw            String
) ENGINE = MergeTree()
PARTITION BY toYYYYMM(quarantined_at)
ORDER BY (quarantined_at, source, run_id);
