package ovhcloud

import "github.com/gpuprice/gpuprice/schemas"

// naming is what the canonicaliser applies to OVHcloud rows. The catalog's GPU blob
// gives the model ("H100", "A100", "H200", "Tesla V100"), the memory and its type, never
// the form factor, so a flavour is placed on a form factor only where OVHcloud has said
// which one it sells; the others stay unknown with the reason (docs/gpu-catalog.md).
var naming = schemas.Naming{
	Rules: []schemas.SKURule{
		schemas.SourcedRule(
			`^(win-)?h100-[0-9]+$`,
			"H100-SXM-80GB",
			"ovhcloud rule: OVHcloud announced its h100-380/760/1520 flavours as \"NVIDIA H100 SXM-based\" "+
				"(github.com/ovh/public-cloud-roadmap/issues/500); the catalog's HBM3 memory agrees (the PCIe card has HBM2e)",
		),
		schemas.SourcedRule(
			`^(win-)?a100-[0-9]+$`,
			"A100-UNSTATED-80GB",
			"ovhcloud rule: OVHcloud states \"A100 80 GB\" HBM2e (catalog; github.com/ovh/public-cloud-roadmap/issues/475) "+
				"and no form factor; SXM and PCIe cards both exist with the same dense figure (312 BF16), so the row is placed "+
				"on the A100 80GB whose form factor is unstated",
		),
		schemas.SourcedRule(
			`^(win-)?h200-[0-9]+$`,
			schemas.UnknownGPU,
			"ovhcloud rule: stays unknown: OVHcloud states \"H200\" 141 GB HBM3e (catalog; "+
				"github.com/ovh/public-cloud-roadmap/issues/749, whose \"2x4H200 GPUs\" fits two 4-GPU SXM boards as well as two "+
				"4-way NVL bridge groups) and no form factor, nor does its prices page; SXM (989.5 dense BF16) and NVL (835.5) "+
				"both exist and no OVHcloud statement of either was found (what was searched: docs/gpu-catalog.md)",
		),
		schemas.SourcedRule(
			`^(win-)?t1-(le-)?[0-9]+$`,
			schemas.UnknownGPU,
			"ovhcloud rule: stays unknown: OVHcloud states \"Tesla V100\" 16 GB HBM2 (catalog) for its t1-* and t1-le-* "+
				"flavours and no form factor, nor does its public roadmap (which names only the t2 flavours' \"Tesla V100S\", "+
				"github.com/ovh/public-cloud-roadmap/issues/48); SXM2 (125 dense FP16) and PCIe (112) both exist and no "+
				"OVHcloud statement of either was found (what was searched: docs/gpu-catalog.md)",
		),
	},
}
