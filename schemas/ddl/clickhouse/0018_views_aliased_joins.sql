-- gpuprice ClickHouse schema, version 18: v_latest, v_day_prices recreated (schemas/views.go says why).
-- GENERATED from schemas/views.go (go test ./schemas -run TestViewMigration -update):
-- do not edit. docs/views.md describes the views' columns.

DROP TABLE IF EXISTS v_latest;

CREATE VIEW IF NOT EXISTS v_latest AS
SELECT d_observed_at AS observed_at, d_effective_at AS effective_at, provider, d_tier AS tier,
    sku, region, zone, d_gpu AS gpu, d_gpu_name AS gpu_name, d_gpu_count AS gpu_count, d_gpu_memory_gb AS gpu_memory_gb, pricing,
    d_price_usd_hour AS price_usd_hour, d_price_usd_gpu_hour AS price_usd_gpu_hour, d_currency AS currency, d_price_native AS price_native, d_unit AS unit, d_fx_rate AS fx_rate, d_interconnect AS interconnect, d_source_kind AS source_kind, d_source_url AS source_url, d_run_id AS run_id, d_price_scope AS price_scope, d_price_basis AS price_basis,
    p_last_seen AS provider_last_seen,
    toUInt8(d_observed_at >= p_last_seen - 86400) AS on_offer
FROM (
    SELECT provider, sku, region, zone, pricing, max(effective_at) AS d_effective_at,
        argMax(observed_at, effective_at) AS d_observed_at,
        argMax(tier, effective_at) AS d_tier,
        argMax(gpu, effective_at) AS d_gpu,
        argMax(gpu_name, effective_at) AS d_gpu_name,
        argMax(gpu_count, effective_at) AS d_gpu_count,
        argMax(gpu_memory_gb, effective_at) AS d_gpu_memory_gb,
        argMax(price_usd_hour, effective_at) AS d_price_usd_hour,
        argMax(price_usd_gpu_hour, effective_at) AS d_price_usd_gpu_hour,
        argMax(currency, effective_at) AS d_currency,
        argMax(price_native, effective_at) AS d_price_native,
        argMax(unit, effective_at) AS d_unit,
        argMax(fx_rate, effective_at) AS d_fx_rate,
        argMax(interconnect, effective_at) AS d_interconnect,
        argMax(source_kind, effective_at) AS d_source_kind,
        argMax(source_url, effective_at) AS d_source_url,
        argMax(run_id, effective_at) AS d_run_id,
        argMax(price_scope, effective_at) AS d_price_scope,
        argMax(price_basis, effective_at) AS d_price_basis
    FROM v_observations
    GROUP BY provider, sku, region, zone, pricing
) AS l ANY LEFT JOIN (
    SELECT provider, max(d_observed_at) AS p_last_seen
    FROM (
        SELECT provider, argMax(observed_at, effective_at) AS d_observed_at
        FROM v_observations
        GROUP BY provider, sku, region, zone, pricing
    )
    GROUP BY provider
) AS r USING provider;

DROP TABLE IF EXISTS v_day_prices;

CREATE VIEW IF NOT EXISTS v_day_prices AS
SELECT toDateTime(toUInt32(b_start) + k * 86400, 'UTC') AS day, provider, sku, region, zone, pricing,
    b_gpu AS gpu, b_tier AS tier, b_interconnect AS interconnect, b_scope AS price_scope,
    b_basis AS price_basis, b_close AS price,
    b_start AS bar_start, s_last_seen AS last_seen, s_withdrawn AS withdrawn
FROM (
    SELECT provider, sku, region, zone, pricing, s_last_seen, s_withdrawn,
        b_start, b_close, b_gpu, b_tier, b_interconnect, b_scope, b_basis,
        arrayJoin(range(toUInt64(intDiv(b_next - toUInt32(b_start), 86400)))) AS k
    FROM (
        SELECT provider, sku, region, zone, pricing, s_last_seen, s_withdrawn,
            b_start, b_close, b_gpu, b_tier, b_interconnect, b_scope, b_basis, b_next
        FROM (
            SELECT provider, sku, region, zone, pricing, s_last_seen, s_withdrawn,
                arrayMap(x -> x.1, bs) AS starts, arrayMap(x -> x.2, bs) AS closes,
                arrayMap(x -> x.3, bs) AS gpus, arrayMap(x -> x.4, bs) AS tiers,
                arrayMap(x -> x.5, bs) AS ics, arrayMap(x -> x.6, bs) AS scopes,
                arrayMap(x -> x.7, bs) AS bases,
                arrayPushBack(arrayMap(x -> toUInt32(x.1), arrayPopFront(bs)), toUInt32(s_end)) AS nexts
            FROM (
                SELECT provider, sku, region, zone, pricing, bs, s_last_seen,
                    toUInt8(toUInt32(s_last_seen) > 0 AND toUInt32(s_last_seen) < toUInt32(p_last_seen) - 86400) AS s_withdrawn,
                    if(s_withdrawn,
                        greatest(intDiv(toUInt32(s_last_seen), 86400) * 86400 + 2 * 86400,
                            toUInt32(bs[length(bs)].1) + 86400),
                        greatest(intDiv(toUInt32(now()), 86400) * 86400 + 86400,
                            toUInt32(bs[length(bs)].1) + 86400)) AS s_end
                FROM (
                    SELECT provider, sku, region, zone, pricing,
                        arraySort(groupArray((bar_start, d_close, d_gpu, d_tier, d_interconnect, d_price_scope, d_price_basis))) AS bs,
                        max(d_last_observed_at) AS s_last_seen
                    FROM (
                        SELECT provider, sku, region, zone, pricing, bar_start,
                            argMax(close, version) AS d_close,
                            argMax(gpu, version) AS d_gpu,
                            argMax(tier, version) AS d_tier,
                            argMax(interconnect, version) AS d_interconnect,
                            argMax(last_observed_at, version) AS d_last_observed_at,
                            argMax(price_scope, version) AS d_price_scope,
                            argMax(price_basis, version) AS d_price_basis
                        FROM bars
                        WHERE width = 86400
                        GROUP BY provider, sku, region, zone, pricing, bar_start
                        HAVING d_price_basis IN ('', 'listed') AND d_price_scope IN ('', 'instance')
                    )
                    GROUP BY provider, sku, region, zone, pricing
                ) AS l ANY LEFT JOIN (
                    SELECT provider, max(d_last_observed_at) AS p_last_seen
                    FROM (
                        SELECT provider, sku, region, zone, pricing, bar_start,
                            argMax(last_observed_at, version) AS d_last_observed_at,
                            argMax(price_scope, version) AS d_price_scope,
                            argMax(price_basis, version) AS d_price_basis
                        FROM bars
                        WHERE width = 86400
                        GROUP BY provider, sku, region, zone, pricing, bar_start
                        HAVING d_price_basis IN ('', 'listed') AND d_price_scope IN ('', 'instance')
                    )
                    GROUP BY provider
                ) AS r USING provider
            )
        )
        ARRAY JOIN starts AS b_start, closes AS b_close, gpus AS b_gpu, tiers AS b_tier, ics AS b_interconnect,
            scopes AS b_scope, bases AS b_basis, nexts AS b_next
    )
);
