-- gpuprice DuckDB schema, version 14: observations without a primary key. The
-- six-column key (five strings) made DuckDB maintain an ART index on every write
-- and at every commit, most of the time of a bulk import (BENCHMARKS.md, issue 12).
-- The store keeps one row per identity itself: each write appends its rows to a
-- staging table, deletes the stored rows of those identities (a hash join) and
-- inserts the staged rows, in one transaction, and writes are serialised. The table
-- is rebuilt with the same columns in the same order and its rows kept.
DROP TABLE IF EXISTS observations_unkeyed;
CREATE TABLE observations_unkeyed (
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
    price_scope        VARCHAR DEFAULT '',
    price_basis        VARCHAR DEFAULT '',
    origin             VARCHAR DEFAULT ''
);
INSERT INTO observations_unkeyed (observed_at, effective_at, provider, tier, sku, region, zone, gpu,
    gpu_name, gpu_count, gpu_memory_gb, pricing, price_usd_hour, price_usd_gpu_hour, currency,
    price_native, unit, fx_rate, interconnect, source_kind, source_url, run_id, attrs, version,
    price_scope, price_basis, origin)
SELECT observed_at, effective_at, provider, tier, sku, region, zone, gpu,
    gpu_name, gpu_count, gpu_memory_gb, pricing, price_usd_hour, price_usd_gpu_hour, currency,
    price_native, unit, fx_rate, interconnect, source_kind, source_url, run_id, attrs, version,
    price_scope, price_basis, origin
FROM observations;
DROP TABLE observations;
ALTER TABLE observations_unkeyed RENAME TO observations;
