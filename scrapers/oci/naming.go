package oci

import (
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// naming is what the canonicaliser applies to OCI rows (OCI's compute shapes
// documentation): shapes and the price list's part names map to their GPU; the
// generation-coded names ("GPU Standard - X7", "V2", "E3", "E4") cover both P100 and
// V100 shapes and stay unknown. OCI's shape page states no form factor; each rule
// says what establishes its placement (docs/gpu-catalog.md).
var naming = schemas.Naming{
	Normalize: func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") },
	Rules: []schemas.SKURule{
		schemas.SourcedRule(
			`^bm\.gpu\.h100\.[0-9]+$`,
			"H100-SXM-80GB",
			"oci rule: OCI Compute Shapes (docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm) lists "+
				"BM.GPU.H100.8 as \"8x H100 80 GB\" without a form factor; Oracle's own cluster quickstart "+
				"(github.com/oracle-quickstart/oci-hpc @b5285a6, playbooks/roles/healthchecks/files/check_gpu_setup.py) checks "+
				"NVIDIA Fabric Manager on BM.GPU.H100.8 and expects 18 NVLinks per GPU; Fabric Manager runs NVSwitch-based "+
				"HGX/DGX boards (docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide), whose GPUs are SXM modules",
		),
		schemas.SourcedRule(
			`^bm\.gpu\.h200\.[0-9]+$`,
			"H200-SXM-141GB",
			"oci rule: OCI Compute Shapes (docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm) lists "+
				"BM.GPU.H200.8 as \"8x NVIDIA H200 Tensor Core GPUs 141 GB\" without a form factor; Oracle's own cluster "+
				"quickstart (github.com/oracle-quickstart/oci-hpc @b5285a6, "+
				"playbooks/roles/healthchecks/files/check_gpu_setup.py) checks NVIDIA Fabric Manager on BM.GPU.H200.8 and "+
				"expects 18 NVLinks per GPU; Fabric Manager runs NVSwitch-based HGX/DGX boards "+
				"(docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide), whose GPUs are SXM modules (the H200 NVL card "+
				"links by bridges, without NVSwitch)",
		),
		schemas.Rule(`^bm\.gpu\.b200\.[0-9]+$`, "B200-SXM-180GB"),
		schemas.Rule(`^bm\.gpu\.gb200\.[0-9]+$`, "GB200-SUPERCHIP-186GB"),
		schemas.SourcedRule(
			`^bm\.gpu\.a100-v2\.[0-9]+$`,
			"A100-SXM-80GB",
			"oci rule: OCI Compute Shapes (docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm) lists "+
				"BM.GPU.A100-v2.8 as \"8xA100\", 640 GB, \"NVIDIA A100 80 GB\", without a form factor; Oracle's oci-hpc "+
				"quickstart expects 12 NVLinks per GPU (as on SXM4, but a bridged PCIe pair has 12 too), so SXM is this repo's "+
				"assumption; the dense BF16 figure, 312, is the same for the PCIe card",
		),
		schemas.SourcedRule(
			`^bm\.gpu4\.[0-9]+$`,
			"A100-SXM-40GB",
			"oci rule: OCI Compute Shapes (docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm) lists "+
				"BM.GPU4.8 as \"8xA100\", \"NVIDIA A100 40 GB\", without a form factor; Oracle's oci-hpc quickstart expects 12 "+
				"NVLinks per GPU (as on SXM4, but a bridged PCIe pair has 12 too), so SXM is this repo's assumption; the dense "+
				"BF16 figure, 312, is the same for the PCIe card",
		),
		schemas.Rule(`^bm\.gpu\.mi300x\.[0-9]+$`, "MI300X-OAM-192GB"),
		schemas.Rule(`^(bm|vm)\.gpu\.a10\.[0-9]+$`, "A10-PCIE-24GB"),
		schemas.Rule(`^bm\.gpu\.l40s(-nc)?\.[0-9]+$`, "L40S-PCIE-48GB"),
		schemas.SourcedRule(
			`^(bm|vm)\.gpu3\.[0-9]+$`,
			schemas.UnknownGPU,
			"oci rule: stays unknown: OCI Compute Shapes "+
				"(docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm) says \"NVIDIA Tesla V100 16 GB\" for "+
				"BM.GPU3.8/VM.GPU3.* and no form factor, nor do Oracle's oci-hpc quickstart or the Oracle runbooks and "+
				"tutorials found; SXM2 (125 dense FP16) and PCIe (112) both exist and no Oracle statement of either was found "+
				"(what was searched: docs/gpu-catalog.md)",
		),
		schemas.SourcedRule(
			`^(bm|vm)\.gpu2\.[0-9]+$`,
			schemas.UnknownGPU,
			"oci rule: stays unknown: OCI Compute Shapes "+
				"(docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm) says \"NVIDIA Tesla P100 16 GB\" for "+
				"BM.GPU2.2/VM.GPU2.1 and no form factor, nor do Oracle's oci-hpc quickstart or the Oracle runbooks and "+
				"tutorials found; SXM2 (21.2 dense FP16) and PCIe (18.7) both exist and no Oracle statement of either was "+
				"found (what was searched: docs/gpu-catalog.md)",
		),
		schemas.Rule(`(^|\s)gpu - a100 - v2$`, "A100-SXM-80GB"),
		schemas.Rule(`gpu standard - (x7|v2)(\s|$)`, schemas.UnknownGPU), // covers both P100 and V100 shapes
		schemas.Rule(`gpu - e[0-9]+(\s|$)`, schemas.UnknownGPU),
	},
	Assumptions: map[string]schemas.Assumption{
		"a100": {Form: schemas.FormSXM, Why: "OCI sells A100 only in 8-GPU HGX shapes (BM.GPU4.8, BM.GPU.A100-v2.8)"},
		"h100": {
			Form: schemas.FormSXM,
			Why: "OCI sells H100 only as BM.GPU.H100.8, an NVSwitch (HGX) shape per Oracle's oci-hpc quickstart Fabric " +
				"Manager check",
		},
		"h200": {
			Form: schemas.FormSXM,
			Why: "OCI sells H200 only as BM.GPU.H200.8, an NVSwitch (HGX) shape per Oracle's oci-hpc quickstart Fabric " +
				"Manager check",
		},
	},
}
