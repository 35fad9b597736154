-- gpuprice ClickHouse schema, version 19: a run is recorded as started before its
-- rows are written, so that a run killed mid-way (kill -9, a lost machine) leaves
-- a record. While its status is "started", finished_at is when its process last
-- reported, owner names that process (host/pid) and span_since / span_until
-- (Unix seconds, [since, until)) cover the effective_at of every batch it began
-- to write: the next run (or serve at start) finds the records whose process is
-- gone, rebuilds the bars over their span and rewrites them as interrupted.
-- Records written before this version read '' and 0.
ALTER TABLE runs ADD COLUMN owner String DEFAULT '' AFTER rows_not_offered;
ALTER TABLE runs ADD COLUMN span_since Int64 DEFAULT 0 AFTER owner;
ALTER TABLE runs ADD COLUMN span_until Int64 DEFAULT 0 AFTER span_since;
