-- gpuprice ClickHouse schema, version 8: a run record says what became of the rows
-- it accepted: stored, spooled (the store was away; a replay writes them) or lost
-- (neither the store nor the spool took them: the run failed). Records written
-- before this version read 0 for all three.
ALTER TABLE runs ADD COLUMN rows_stored Int64 DEFAULT 0 AFTER unknown_gpus;
ALTER TABLE runs ADD COLUMN rows_spooled Int64 DEFAULT 0 AFTER rows_stored;
ALTER TABLE runs ADD COLUMN rows_lost Int64 DEFAULT 0 AFTER rows_spooled;
