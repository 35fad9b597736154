-- gpuprice ClickHouse schema, version 15: volatility_days, per series and UTC day, a
-- summary of the day's hourly bars from which a window's volatility figures combine
-- exactly (docs/analytics.md, "Volatility on ClickHouse"), so that 30-day volatility
-- reads about 30 rows per series instead of 720 bars. Written by the store's Rollup
-- with the bars of the days it rebuilds (same version), and filled from the hourly
-- bars already built when this migration is applied. A rebuilt day is written again
-- with a higher version; reads take argMax(…, version) per (series, day).
--   gpu, tier            of the day's last bar; uniform = 1 when every bar has both
--   bars                 hourly bars of the day; first_start, the first one's start
--   first_close, last_close, high (max high), low (min low), close_max, close_min
--   close_s1, close_s2   Σ (close − first_close), Σ (close − first_close)²
--   returns              log returns between consecutive bars of the day (both > 0)
--   ret_first            the first of them; ret_s1, ret_s2: Σ (r − ret_first), Σ (r − ret_first)²
--   ret_min, ret_max, changes (closes differing from the previous bar's), drawdown
--   starts … tiers       the day's bars (start in Unix seconds, close, high, low, gpu,
--                        tier), for windows that cut the day and tier/GPU filters
CREATE TABLE IF NOT EXISTS volatility_days (
    day          DateTime('UTC'),
    provider     String,
    sku          String,
    region       String,
    zone         String,
    pricing      String,
    gpu          String,
    tier         String,
    uniform      UInt8,
    bars         UInt32,
    first_start  DateTime('UTC'),
    first_close  Float64,
    last_close   Float64,
    high         Float64,
    low          Float64,
    close_max    Float64,
    close_min    Float64,
    close_s1     Float64,
    close_s2     Float64,
    returns      UInt32,
    ret_first    Float64,
    ret_s1       Float64,
    ret_s2       Float64,
    ret_min      Float64,
    ret_max      Float64,
    changes      UInt32,
    drawdown     Float64,
    starts       Array(UInt32),
    closes       Array(Float64),
    highs        Array(Float64),
    lows         Array(Float64),
    gpus         Array(String),
    tiers        Array(String),
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(day)
ORDER BY (day, pricing, provider, region, sku, zone);
