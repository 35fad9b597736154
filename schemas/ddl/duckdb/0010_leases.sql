-- gpuprice DuckDB schema, version 10: named leases (store.Leaser), as in ClickHouse;
-- here one row per name, taken or renewed in a transaction.
CREATE TABLE IF NOT EXISTS leases (
    name       VARCHAR NOT NULL PRIMARY KEY,
    owner      VARCHAR NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    version    UBIGINT NOT NULL
);
