-- gpuprice ClickHouse schema, version 6: views a dashboard can query safely.
-- GENERATED from schemas/views.go (go test ./schemas -run TestViewMigration -update):
-- do not edit. Each view returns one row per identity, the last write
-- (argMax(…, version)), whether or not the table's parts have merged;
-- docs/views.md describes their columns.

CREATE VIEW IF NOT EXISTS v_observations AS
SELECT d_observed_at AS observed_at, effective_at, provider, d_tier AS tier, sku, region, zone,
    d_gpu AS gpu, d_gpu_name AS gpu_name, d_gpu_count AS gpu_count, d_gpu_memory_gb AS gpu_memory_gb, pricing,
    d_price_usd_hour AS price_usd_hour, d_price_usd_gpu_hour AS price_usd_gpu_hour, d_currency AS currency, d_price_native AS price_native, d_unit AS unit, d_fx_rate AS fx_rate, d_interconnect AS interconnect, d_source_kind AS source_kind, d_source_url AS source_url, d_run_id AS run_id, d_attrs AS attrs, d_price_scope AS price_scope, d_price_basis AS price_basis
FROM (
    SELECT provider, sku, region, zone, pricing, effective_at,
        argMax(observed_at, version) AS d_observed_at,
        argMax(tier, version) AS d_tier,
        argMax(gpu, version) AS d_gpu,
        argMax(gpu_name, version) AS d_gpu_name,
        argMax(gpu_count, version) AS d_gpu_count,
        argMax(gpu_memory_gb, version) AS d_gpu_memory_gb,
        argMax(price_usd_hour, version) AS d_price_usd_hour,
        argMax(price_usd_gpu_hour, version) AS d_price_usd_gpu_hour,
        argMax(currency, version) AS d_currency,
        argMax(price_native, version) AS d_price_native,
        argMax(unit, version) AS d_unit,
        argMax(fx_rate, version) AS d_fx_rate,
        argMax(interconnect, version) AS d_interconnect,
        argMax(source_kind, version) AS d_source_kind,
        argMax(source_url, version) AS d_source_url,
        argMax(run_id, version) AS d_run_id,
        argMax(attrs, version) AS d_attrs,
        argMax(price_scope, version) AS d_price_scope,
        argMax(price_basis, version) AS d_price_basis
    FROM observations
    GROUP BY provider, sku, region, zone, pricing, effective_at
);

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

CREATE VIEW IF NOT EXISTS v_bars AS
SELECT width, bar_start, provider, sku, region, zone, pricing,
    d_gpu AS gpu, d_tier AS tier, d_interconnect AS interconnect, d_price_scope AS price_scope, d_price_basis AS price_basis, d_open AS open, d_high AS high, d_low AS low, d_close AS close, d_mean AS mean, d_count AS count, d_last_observed_at AS last_observed_at
FROM (
    SELECT width, bar_start, provider, sku, region, zone, pricing,
        argMax(gpu, version) AS d_gpu,
        argMax(tier, version) AS d_tier,
        argMax(interconnect, version) AS d_interconnect,
        argMax(price_scope, version) AS d_price_scope,
        argMax(price_basis, version) AS d_price_basis,
        argMax(open, version) AS d_open,
        argMax(high, version) AS d_high,
        argMax(low, version) AS d_low,
        argMax(close, version) AS d_close,
        argMax(mean, version) AS d_mean,
        argMax(count, version) AS d_count,
        argMax(last_observed_at, version) AS d_last_observed_at
    FROM bars
    GROUP BY width, bar_start, provider, sku, region, zone, pricing
);

CREATE VIEW IF NOT EXISTS v_day_prices AS
SELECT toDateTime(toUInt32(b_start) + k * 86400, 'UTC') AS day, provider, sku, region, zone, pricing,
    b_gpu AS gpu, b_tier AS tier, b_interconnect AS interconnect, b_scope AS price_scope,
    b_basis AS price_basis, b_close AS price,
    b_start AS bar_start, s_last_seen AS last_seen, s_withdrawn AS withdrawn
FROM (
    SELECT provider, sku, region, zone, pricing, s_last_seen, s_withdrawn,
        bs[i].1 AS b_start, bs[i].2 AS b_close, bs[i].3 AS b_gpu, bs[i].4 AS b_tier, bs[i].5 AS b_interconnect,
        bs[i].6 AS b_scope, bs[i].7 AS b_basis,
        if(i < length(bs), toUInt32(bs[i + 1].1), s_end) AS b_next,
        arrayJoin(range(toUInt64(intDiv(b_next - toUInt32(b_start), 86400)))) AS k
    FROM (
        SELECT provider, sku, region, zone, pricing, bs, s_last_seen, s_withdrawn, s_end,
            arrayJoin(arrayEnumerate(bs)) AS i
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
                    arraySort(groupArray((bar_start, close, gpu, tier, interconnect, price_scope, price_basis))) AS bs,
                    max(last_observed_at) AS s_last_seen
                FROM v_bars
                WHERE width = 86400
                GROUP BY provider, sku, region, zone, pricing
            ) AS l ANY LEFT JOIN (
                SELECT provider, max(last_observed_at) AS p_last_seen
                FROM v_bars
                WHERE width = 86400
                GROUP BY provider
            ) AS r USING provider
        )
    )
);

CREATE VIEW IF NOT EXISTS v_spreads AS
SELECT gpu, pricing, day,
    if(length(h) = 0, 0, h[(toUInt64(floor(((length(h) - 1) * 0.5))) + 1)] + (((length(h) - 1) * 0.5) - floor(((length(h) - 1) * 0.5))) * (h[least((toUInt64(floor(((length(h) - 1) * 0.5))) + 1) + 1, length(h))] - h[(toUInt64(floor(((length(h) - 1) * 0.5))) + 1)])) AS hyperscaler,
    if(length(s) = 0, 0, s[(toUInt64(floor(((length(s) - 1) * 0.5))) + 1)] + (((length(s) - 1) * 0.5) - floor(((length(s) - 1) * 0.5))) * (s[least((toUInt64(floor(((length(s) - 1) * 0.5))) + 1) + 1, length(s))] - s[(toUInt64(floor(((length(s) - 1) * 0.5))) + 1)])) AS specialist,
    if(length(m) = 0, 0, m[(toUInt64(floor(((length(m) - 1) * 0.5))) + 1)] + (((length(m) - 1) * 0.5) - floor(((length(m) - 1) * 0.5))) * (m[least((toUInt64(floor(((length(m) - 1) * 0.5))) + 1) + 1, length(m))] - m[(toUInt64(floor(((length(m) - 1) * 0.5))) + 1)])) AS marketplace,
    toUInt64(length(h)) AS n_hyperscaler, toUInt64(length(s)) AS n_specialist, toUInt64(length(m)) AS n_marketplace,
    if(hyperscaler > 0 AND specialist > 0, hyperscaler / specialist, 0) AS ratio,
    if(ratio > 0, (ratio - 1) * 100, 0) AS premium_pct
FROM (
    SELECT gpu, pricing, day,
        arraySort(groupArrayIf(price, tier = 'hyperscaler')) AS h,
        arraySort(groupArrayIf(price, tier = 'specialist')) AS s,
        arraySort(groupArrayIf(price, tier = 'marketplace')) AS m
    FROM v_day_prices
    GROUP BY gpu, pricing, day
);

CREATE VIEW IF NOT EXISTS v_index AS
SELECT gpu, pricing, g AS group_name, day, if(length(kept) = 0, 0, kept[(toUInt64(floor(((length(kept) - 1) * 0.5))) + 1)] + (((length(kept) - 1) * 0.5) - floor(((length(kept) - 1) * 0.5))) * (kept[least((toUInt64(floor(((length(kept) - 1) * 0.5))) + 1) + 1, length(kept))] - kept[(toUInt64(floor(((length(kept) - 1) * 0.5))) + 1)])) AS price,
    toUInt64(length(xs)) AS offers, toUInt64(length(xs) - length(kept)) AS dropped,
    'gpuprice-index/2' AS method
FROM (
    SELECT gpu, pricing, g, day, xs,
        if(length(xs) >= 3 AND sd > 0, arrayFilter((x, m, d) -> abs(x - m) <= 2.5 * d, xs, replicate(mu, xs), replicate(sd, xs)), xs) AS kept
    FROM (
        SELECT gpu, pricing, if(tier = 'hyperscaler', 'hyperscaler', 'others') AS g, day,
            arraySort(groupArray(price)) AS xs, avg(price) AS mu,
            if(count() >= 2, stddevSamp(price), 0) AS sd
        FROM v_day_prices
        GROUP BY gpu, pricing, g, day
    )
);

CREATE VIEW IF NOT EXISTS v_runs AS
SELECT run_id, source, d_started_at AS started_at, d_finished_at AS finished_at, d_status AS status, d_rows_accepted AS rows_accepted, d_rows_quarantined AS rows_quarantined, d_unknown_gpus AS unknown_gpus, d_error AS error,
    toInt64(toUInt32(d_finished_at)) - toInt64(toUInt32(d_started_at)) AS duration_seconds
FROM (
    SELECT run_id, source,
        argMax(started_at, version) AS d_started_at,
        argMax(finished_at, version) AS d_finished_at,
        argMax(status, version) AS d_status,
        argMax(rows_accepted, version) AS d_rows_accepted,
        argMax(rows_quarantined, version) AS d_rows_quarantined,
        argMax(unknown_gpus, version) AS d_unknown_gpus,
        argMax(error, version) AS d_error
    FROM runs
    GROUP BY run_id, source
);

CREATE VIEW IF NOT EXISTS v_quarantine AS
SELECT q_at AS quarantined_at, run_id, source, reason, raw
FROM (
    SELECT min(quarantined_at) AS q_at, run_id, source, reason, raw
    FROM quarantine
    GROUP BY run_id, source, reason, raw
);
