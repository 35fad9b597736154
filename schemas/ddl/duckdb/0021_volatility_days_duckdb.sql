-- gpuprice DuckDB schema, version 21: volatility_days, per series and UTC day, the
-- summary of the day's hourly bars that ClickHouse has kept since version 15 (see
-- that migration for the columns), so that a 30-day volatility combines about 30
-- rows per series in one query instead of running window functions over 720 bars
-- (docs/analytics.md, "Volatility on DuckDB"). The primary key keeps one row per
-- series and day: the store's Rollup rewrites the rows of the days it rebuilds, in
-- the same transaction as their bars. The days' bars are not kept here: a window
-- that cuts a day reads them from bars. Filled from the hourly bars already built
-- when this migration is applied (the store runs that step after this statement).
-- ret_first is the log return of the day's first two closes (its first return, as
-- prices are positive; 0 for a day of one bar): ret_s1 and ret_s2 are summed around it.
CREATE TABLE IF NOT EXISTS volatility_days (
    day          TIMESTAMP NOT NULL,
    provider     VARCHAR NOT NULL,
    sku          VARCHAR NOT NULL,
    region       VARCHAR NOT NULL,
    zone         VARCHAR NOT NULL,
    pricing      VARCHAR NOT NULL,
    gpu          VARCHAR NOT NULL,
    tier         VARCHAR NOT NULL,
    uniform      BOOLEAN NOT NULL,
    bars         UINTEGER NOT NULL,
    first_start  TIMESTAMP NOT NULL,
    first_close  DOUBLE NOT NULL,
    last_close   DOUBLE NOT NULL,
    high         DOUBLE NOT NULL,
    low          DOUBLE NOT NULL,
    close_max    DOUBLE NOT NULL,
    close_min    DOUBLE NOT NULL,
    close_s1     DOUBLE NOT NULL,
    close_s2     DOUBLE NOT NULL,
    returns      UINTEGER NOT NULL,
    ret_first    DOUBLE NOT NULL,
    ret_s1       DOUBLE NOT NULL,
    ret_s2       DOUBLE NOT NULL,
    ret_min      DOUBLE NOT NULL,
    ret_max      DOUBLE NOT NULL,
    changes      UINTEGER NOT NULL,
    drawdown     DOUBLE NOT NULL,
    PRIMARY KEY (provider, sku, region, zone, pricing, day)
);
