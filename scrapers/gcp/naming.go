package gcp

import "github.com/gpuprice/gpuprice/schemas"

// naming is what the canonicaliser applies to GCP rows (Compute Engine's GPU machine
// types documentation): A2, A3, A4 and G2 machine types map to their GPU; names
// without a form factor follow what GCP sells.
var naming = schemas.Naming{
	Rules: []schemas.SKURule{
		schemas.Rule(`^a2-(highgpu-[0-9]+g|megagpu-16g)$`, "A100-SXM-40GB"),
		schemas.Rule(`^a2-ultragpu-[0-9]+g$`, "A100-SXM-80GB"),
		schemas.Rule(`^a3-(highgpu|megagpu|edgegpu)-[0-9]+g(-nolssd)?$`, "H100-SXM-80GB"),
		schemas.Rule(`^a3-ultragpu-[0-9]+g(-nolssd)?$`, "H200-SXM-141GB"),
		schemas.Rule(`^a4-highgpu-[0-9]+g(-nolssd)?$`, "B200-SXM-180GB"),
		schemas.Rule(`^a4x-highgpu-[0-9]+g(-nolssd)?$`, "GB200-SUPERCHIP-186GB"),
		schemas.Rule(`^g2-standard-[0-9]+$`, "L4-PCIE-24GB"),
	},
	Assumptions: map[string]schemas.Assumption{
		"a100": {
			Form:     schemas.FormSXM,
			MemoryGB: 40,
			Why:      "GCP attaches A100 only to A2 machines (SXM4); 40GB unless the SKU says 80GB",
		},
		"h100": {Form: schemas.FormSXM, Why: "GCP sells H100 only in A3 machines (SXM)"},
		"h200": {Form: schemas.FormSXM, Why: "GCP sells H200 only in A3 Ultra machines (SXM)"},
		"v100": {Form: schemas.FormSXM, MemoryGB: 16, Why: "GCP V100s are 16GB NVLink (SXM2) parts"},
		"p100": {Form: schemas.FormPCIe, Why: "GCP P100s are 16GB PCIe cards"},
	},
}
