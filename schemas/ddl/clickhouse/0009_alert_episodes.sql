-- gpuprice ClickHouse schema, version 9: alert history. One row per time an alert
-- instance fired (an episode): when it started and resolved (the epoch while it
-- still fires), and the instance as JSON then (series, prices and times compared,
-- threshold, link). Identity (rule, subject, starts_at); last write wins: a
-- resolution writes the episode again with its end.
CREATE TABLE IF NOT EXISTS alert_episodes (
    rule      String,
    kind      String,
    subject   String,
    starts_at DateTime('UTC'),
    ends_at   DateTime('UTC'),
    fired     String,
    resolved  String,
    version   UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (rule, subject, starts_at);
