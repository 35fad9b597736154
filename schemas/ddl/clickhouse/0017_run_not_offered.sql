-- gpuprice ClickHouse schema, version 17: a run record counts the rows its source
-- said are not offered (rows_not_offered: RunPod's null or 0 price for a cloud
-- without the GPU, a page's "N/A"). They are no prices and no problem of the
-- source: they are neither stored nor quarantined, only counted. Records written
-- before this version read 0.
ALTER TABLE runs ADD COLUMN rows_not_offered Int64 DEFAULT 0 AFTER rows_suspect;
