-- gpuprice ClickHouse schema, version 10: named leases (store.Leaser). Of the
-- `gpuprice serve` processes sharing a store, the holder of the "alerts" lease
-- evaluates and notifies; the others stand by. ClickHouse has no transactions: each
-- claim or renewal is a row, the highest version wins (argMax), and a taker reads
-- back who won after a short settle time. expires_at is the server's clock.
CREATE TABLE IF NOT EXISTS leases (
    name       String,
    owner      String,
    expires_at DateTime('UTC'),
    version    UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY name;
