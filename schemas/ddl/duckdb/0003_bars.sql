-- gpuprice DuckDB schema, version 3: hourly and daily bars per series, the same as
-- ClickHouse's. The store's Rollup recomputes bars from observations (which the
-- primary key keeps one per identity) and upserts them. Prices are
-- price_usd_gpu_hour; width is the bar's length in seconds (3600 or 86400).
CREATE TABLE IF NOT EXISTS bars (
    width        UINTEGER NOT NULL,
    bar_start    TIMESTAMP NOT NULL,
    provider     VARCHAR NOT NULL,
    sku          VARCHAR NOT NULL,
    region       VARCHAR NOT NULL,
    zone         VARCHAR NOT NULL,
    pricing      VARCHAR NOT NULL,
    gpu          VARCHAR NOT NULL,
    tier         VARCHAR NOT NULL,
    interconnect VARCHAR NOT NULL,
    open         DOUBLE NOT NULL,
    high         DOUBLE NOT NULL,
    low          DOUBLE NOT NULL,
    close        DOUBLE NOT NULL,
    mean         DOUBLE NOT NULL,
    count        UBIGINT NOT NULL,
    version      UBIGINT NOT NULL,
    PRIMARY KEY (width, provider, sku, region, zone, pricing, bar_start)
);
