package oci

import (
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// naming is what the canonicaliser applies to OCI rows (OCI's compute shapes
// documentation): shapes and the price list's part names map to their GPU; the
// generation-coded names ("GPU Standard - X7", "V2", "E3", "E4") cover both P100 and
// V100 shapes and stay unknown. OCI sells A100, H100 and H200 only in 8-GPU HGX
// (SXM) shapes.
var naming = schemas.Naming{
	Normalize: func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") },
	Rules: []schemas.SKURule{
		schemas.Rule(`^bm\.gpu\.h100\.[0-9]+$`, "H100-SXM-80GB"),
		schemas.Rule(`^bm\.gpu\.h200\.[0-9]+$`, "H200-SXM-141GB"),
		schemas.Rule(`^bm\.gpu\.b200\.[0-9]+$`, "B200-SXM-180GB"),
		schemas.Rule(`^bm\.gpu\.gb200\.[0-9]+$`, "GB200-SUPERCHIP-186GB"),
		schemas.Rule(`^bm\.gpu\.a100-v2\.[0-9]+$`, "A100-SXM-80GB"),
		schemas.Rule(`^bm\.gpu4\.[0-9]+$`, "A100-SXM-40GB"),
		schemas.Rule(`^bm\.gpu\.mi300x\.[0-9]+$`, "MI300X-OAM-192GB"),
		schemas.Rule(`^(bm|vm)\.gpu\.a10\.[0-9]+$`, "A10-PCIE-24GB"),
		schemas.Rule(`^bm\.gpu\.l40s(-nc)?\.[0-9]+$`, "L40S-PCIE-48GB"),
		schemas.Rule(`^(bm|vm)\.gpu3\.[0-9]+$`, "V100-SXM-16GB"),
		schemas.Rule(`^(bm|vm)\.gpu2\.[0-9]+$`, schemas.UnknownGPU), // P100, form factor not documented
		schemas.Rule(`(^|\s)gpu - a100 - v2$`, "A100-SXM-80GB"),
		schemas.Rule(`gpu standard - (x7|v2)(\s|$)`, schemas.UnknownGPU), // covers both P100 and V100 shapes
		schemas.Rule(`gpu - e[0-9]+(\s|$)`, schemas.UnknownGPU),
	},
	Assumptions: map[string]schemas.Assumption{
		"a100": {Form: schemas.FormSXM, Why: "OCI sells A100 only in 8-GPU HGX shapes (BM.GPU4.8, BM.GPU.A100-v2.8)"},
		"h100": {Form: schemas.FormSXM, Why: "OCI sells H100 only as BM.GPU.H100.8 (HGX)"},
		"h200": {Form: schemas.FormSXM, Why: "OCI sells H200 only as BM.GPU.H200.8 (HGX)"},
	},
}
