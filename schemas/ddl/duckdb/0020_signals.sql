-- gpuprice DuckDB schema, version 20: risk and availability signals, as in
-- ClickHouse (see that migration). The primary key keeps one row per identity.
CREATE TABLE IF NOT EXISTS signals (
    observed_at  TIMESTAMP NOT NULL,
    effective_at TIMESTAMP NOT NULL,
    provider     VARCHAR NOT NULL,
    sku          VARCHAR NOT NULL,
    region       VARCHAR NOT NULL,
    zone         VARCHAR NOT NULL,
    gpu          VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,
    value        DOUBLE NOT NULL,
    label        VARCHAR NOT NULL,
    source       VARCHAR NOT NULL,
    source_url   VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL,
    attrs        VARCHAR NOT NULL,
    version      UBIGINT NOT NULL,
    PRIMARY KEY (provider, sku, region, zone, kind, effective_at)
);
