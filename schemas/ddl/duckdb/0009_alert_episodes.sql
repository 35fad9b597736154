-- gpuprice DuckDB schema, version 9: alert history, as in ClickHouse (see that
-- migration); ends_at is NULL while the episode still fires.
CREATE TABLE IF NOT EXISTS alert_episodes (
    rule      VARCHAR NOT NULL,
    kind      VARCHAR NOT NULL,
    subject   VARCHAR NOT NULL,
    starts_at TIMESTAMP NOT NULL,
    ends_at   TIMESTAMP,
    fired     VARCHAR NOT NULL,
    resolved  VARCHAR NOT NULL,
    version   UBIGINT NOT NULL,
    PRIMARY KEY (rule, subject, starts_at)
);
