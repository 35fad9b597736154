-- gpuprice ClickHouse schema, version 12: a run record counts the rows the relative
-- gate held as suspect (rows_suspect, within rows_quarantined), so a run's suspect
-- prices are told apart from rows that failed validation. Records written before this
-- version read 0.
ALTER TABLE runs ADD COLUMN rows_suspect Int64 DEFAULT 0 AFTER version;
