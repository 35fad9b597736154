-- gpuprice DuckDB schema, version 7: v_day_prices (docs/views.md, docs/analytics.md
-- "Day price") for the embedded store too: per series and UTC day, the close of its
-- last daily bar on or before the day, carried forward through today; a withdrawn
-- series (last seen more than 24 h before its provider's newest sighting) ends the
-- day after the day it was last seen (and not before the day after its last bar).
-- Sightings unknown (bars rolled up before version 4: NULL) never withdraw a series.
-- Only comparable bars take part (analytics.Comparable): listed prices of whole
-- instances ("" reads as listed / instance), never derived, floor or GPU-only prices.
CREATE VIEW IF NOT EXISTS v_day_prices AS
WITH b AS (
    SELECT provider, sku, region, zone, pricing, gpu, tier, interconnect, price_scope, price_basis,
        close, bar_start,
        lead(bar_start) OVER (PARTITION BY provider, sku, region, zone, pricing ORDER BY bar_start) AS next_start,
        max(last_observed_at) OVER (PARTITION BY provider, sku, region, zone, pricing) AS s_last_seen,
        max(bar_start) OVER (PARTITION BY provider, sku, region, zone, pricing) AS s_last_bar,
        max(last_observed_at) OVER (PARTITION BY provider) AS p_last_seen
    FROM bars
    WHERE width = 86400 AND price_basis IN ('', 'listed') AND price_scope IN ('', 'instance')
), s AS (
    SELECT *,
        coalesce(s_last_seen < p_last_seen - INTERVAL 24 HOUR, false) AS s_withdrawn,
        CASE WHEN coalesce(s_last_seen < p_last_seen - INTERVAL 24 HOUR, false)
            THEN greatest(date_trunc('day', s_last_seen) + INTERVAL 2 DAY, s_last_bar + INTERVAL 1 DAY)
            ELSE greatest(make_timestamp(CAST(floor(epoch(now()) / 86400) * 86400 * 1000000 AS BIGINT)) + INTERVAL 1 DAY,
                s_last_bar + INTERVAL 1 DAY)
        END AS s_end
    FROM b
)
SELECT unnest(generate_series(bar_start, least(coalesce(next_start, s_end), s_end) - INTERVAL 1 DAY, INTERVAL 1 DAY)) AS day,
    provider, sku, region, zone, pricing, gpu, tier, interconnect, price_scope, price_basis,
    close AS price, bar_start, s_last_seen AS last_seen, CAST(s_withdrawn AS UTINYINT) AS withdrawn
FROM s;
