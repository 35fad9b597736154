-- gpuprice ClickHouse schema, version 11: where a row came from, beside source_kind
-- (how the provider published it). origin is "" for a price collected from its
-- provider (or imported) and "recorded" for a row loaded from a recorded example
-- archive (`gpuprice reparse examples/recorded`: real-shaped responses of the
-- sources' test fixtures, kept with the time they were recorded at), never a current
-- price. The row's attrs say the same (attrs.origin), which is what readers use; the
-- column lets SQL select or leave out recorded rows: WHERE origin = ''. Rows written
-- before this version read "".
ALTER TABLE observations ADD COLUMN origin String AFTER price_basis;
