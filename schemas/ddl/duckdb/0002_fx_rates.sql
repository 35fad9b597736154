-- gpuprice DuckDB schema, version 2: daily FX rates.
-- Identity (currency, date) is the primary key; writers upsert, the last write wins.
CREATE TABLE IF NOT EXISTS fx_rates (
    date         DATE NOT NULL,
    currency     VARCHAR NOT NULL,
    usd_per_unit DOUBLE NOT NULL,
    source       VARCHAR NOT NULL,
    version      UBIGINT NOT NULL,
    PRIMARY KEY (currency, date)
);
