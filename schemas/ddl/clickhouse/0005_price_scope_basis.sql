-- gpuprice ClickHouse schema, version 5: every price says what it covers and how it
-- was obtained, so that analytics compare like with like (docs/analytics.md, "Like
-- with like").
--   price_scope: "instance" (the whole machine: GPUs, CPU, memory, disk) or
--                "gpu_only" (an accelerator SKU priced apart from the VM it attaches
--                to, as GCP's nvidia-h100-80gb).
--   price_basis: "listed" (a price the provider publishes), "derived" (computed by a
--                documented rule, as OCI preemptible at 50 % of on-demand) or "floor"
--                (a "from $X" lower bound, as GMI's page prints).
-- Bars carry both, from the last write of the bar's last observation. Rows and bars
-- written before this version read "" for both, which readers take as
-- instance/listed until a reparse or rollup rewrites them.
ALTER TABLE observations ADD COLUMN price_scope String AFTER attrs;
ALTER TABLE observations ADD COLUMN price_basis String AFTER price_scope;
ALTER TABLE bars ADD COLUMN price_scope String AFTER interconnect;
ALTER TABLE bars ADD COLUMN price_basis String AFTER price_scope;
