-- gpuprice DuckDB schema, version 1: the same tables and columns as ClickHouse's.
-- Times are TIMESTAMP holding UTC, whole seconds.

-- Applied migrations. The migrator reads it, so every migration records itself here.
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    applied_at TIMESTAMP NOT NULL
);

-- One price for one SKU, at one place, of one pricing kind, at one time.
-- The primary key is the identity; writers upsert (INSERT ... ON CONFLICT DO UPDATE),
-- so the last write of an identity wins, as ClickHouse's ReplacingMergeTree(version)
-- does. version is kept for parity with ClickHouse.
CREATE TABLE IF NOT EXISTS observations (
    observed_at        TIMESTAMP NOT NULL,
    effective_at       TIMESTAMP NOT NULL,
    provider           VARCHAR NOT NULL,
    tier               VARCHAR NOT NULL,
    sku                VARCHAR NOT NULL,
    region             VARCHAR NOT NULL,
    zone               VARCHAR NOT NULL,
    gpu                VARCHAR NOT NULL,
    gpu_name           VARCHAR NOT NULL,
    gpu_count          DOUBLE NOT NULL,
    gpu_memory_gb      DOUBLE NOT NULL,
    pricing            VARCHAR NOT NULL,
    price_usd_hour     DOUBLE NOT NULL,
    price_usd_gpu_hour DOUBLE NOT NULL,
    currency           VARCHAR NOT NULL,
    price_native       DOUBLE NOT NULL,
    unit               VARCHAR NOT NULL,
    fx_rate            DOUBLE NOT NULL,
    interconnect       VARCHAR NOT NULL,
    source_kind        VARCHAR NOT NULL,
    source_url         VARCHAR NOT NULL,
    run_id             VARCHAR NOT NULL,
    attrs              VARCHAR NOT NULL,
    version            UBIGINT NOT NULL,
    PRIMARY KEY (provider, sku, region, zone, pricing, effective_at)
);

-- One source's part in one collection run. Identity (run_id, source); last write wins.
CREATE TABLE IF NOT EXISTS runs (
    run_id           VARCHAR NOT NULL,
    source           VARCHAR NOT NULL,
    started_at       TIMESTAMP NOT NULL,
    finished_at      TIMESTAMP NOT NULL,
    status           VARCHAR NOT NULL,
    rows_accepted    BIGINT NOT NULL,
    rows_quarantined BIGINT NOT NULL,
    unknown_gpus     BIGINT NOT NULL,
    error            VARCHAR NOT NULL,
    version          UBIGINT NOT NULL,
    PRIMARY KEY (run_id, source)
);

-- Rows that failed validation, kept with the reason. An append-only log.
CREATE TABLE IF NOT EXISTS quarantine (
    quarantined_at TIMESTAMP NOT NULL,
    run_id         VARCHAR NOT NULL,
    source         VARCHAR NOT NULL,
    reason         VARCHAR NOT NULL,
    raw            VARCHAR NOT NULL
);
