-- gpuprice DuckDB schema, version 6: the dashboard views that the embedded store can
-- give cheaply, with the names and columns of ClickHouse's (docs/views.md). DuckDB
-- keeps one row per identity already (primary keys, INSERT OR REPLACE), so these
-- only hide the version column and add what ClickHouse's add. v_day_prices,
-- v_spreads and v_index are ClickHouse-only: on DuckDB the CLI computes them.
CREATE VIEW IF NOT EXISTS v_observations AS
SELECT observed_at, effective_at, provider, tier, sku, region, zone, gpu, gpu_name, gpu_count,
    gpu_memory_gb, pricing, price_usd_hour, price_usd_gpu_hour, currency, price_native, unit,
    fx_rate, interconnect, source_kind, source_url, run_id, attrs, price_scope, price_basis
FROM observations;

CREATE VIEW IF NOT EXISTS v_latest AS
WITH l AS (
    SELECT DISTINCT ON (provider, sku, region, zone, pricing) *
    FROM observations
    ORDER BY provider, sku, region, zone, pricing, effective_at DESC
), p AS (
    SELECT provider, max(observed_at) AS provider_last_seen FROM l GROUP BY provider
)
SELECT l.observed_at, l.effective_at, l.provider, l.tier, l.sku, l.region, l.zone, l.gpu, l.gpu_name,
    l.gpu_count, l.gpu_memory_gb, l.pricing, l.price_usd_hour, l.price_usd_gpu_hour, l.currency,
    l.price_native, l.unit, l.fx_rate, l.interconnect, l.source_kind, l.source_url, l.run_id,
    l.price_scope, l.price_basis, p.provider_last_seen,
    CAST(l.observed_at >= p.provider_last_seen - INTERVAL 24 HOUR AS UTINYINT) AS on_offer
FROM l JOIN p USING (provider);

CREATE VIEW IF NOT EXISTS v_bars AS
SELECT width, bar_start, provider, sku, region, zone, pricing, gpu, tier, interconnect,
    price_scope, price_basis, open, high, low, close, mean, count, last_observed_at
FROM bars;

CREATE VIEW IF NOT EXISTS v_runs AS
SELECT run_id, source, started_at, finished_at, status, rows_accepted, rows_quarantined,
    unknown_gpus, error, CAST(epoch(finished_at) - epoch(started_at) AS BIGINT) AS duration_seconds
FROM runs;

CREATE VIEW IF NOT EXISTS v_quarantine AS
SELECT min(quarantined_at) AS quarantined_at, run_id, source, reason, raw
FROM quarantine
GROUP BY run_id, source, reason, raw;
