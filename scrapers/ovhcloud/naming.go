package ovhcloud

import "github.com/gpuprice/gpuprice/schemas"

// naming is what the canonicaliser applies to OVHcloud rows. The catalog's GPU blob
// gives the model ("H100", "A100", "H200", "Tesla V100"), the memory and its type, never
// the form factor, so a flavour is placed on a form factor only where OVHcloud has said
// which one it sells; the others stay unknown with the reason (docs/gpu-catalog.md).
var naming = schemas.Naming{
	Rules: []schemas.SKURule{
		sourcedRule(`^(win-)?h100-[0-9]+$`, "H100-SXM-80GB",
			"ovhcloud rule: OVHcloud announced its h100-380/760/1520 flavours as \"NVIDIA H100 SXM-based\" (github.com/ovh/public-cloud-roadmap/issues/500); the catalog's HBM3 memory agrees (the PCIe card has HBM2e)"),
		sourcedRule(`^(win-)?a100-[0-9]+$`, "A100-UNSTATED-80GB",
			"ovhcloud rule: OVHcloud states \"A100 80 GB\" HBM2e (catalog; github.com/ovh/public-cloud-roadmap/issues/475) and no form factor; SXM and PCIe cards both exist with the same dense figure (312 BF16), so the row is placed on the A100 80GB whose form factor is unstated"),
		sourcedRule(`^(win-)?h200-[0-9]+$`, schemas.UnknownGPU,
			"ovhcloud rule: OVHcloud states \"H200\" 141 GB HBM3e (catalog; github.com/ovh/public-cloud-roadmap/issues/749) and no form factor; SXM (989.5 dense BF16) and NVL (835.5) both exist"),
		sourcedRule(`^(win-)?t1-(le-)?[0-9]+$`, schemas.UnknownGPU,
			"ovhcloud rule: OVHcloud states \"Tesla V100\" 16 GB HBM2 and no form factor; SXM2 (125 dense FP16) and PCIe (112) both exist"),
	},
}

// sourcedRule is a SKU rule whose explanation names its source.
func sourcedRule(expr, id, why string) schemas.SKURule {
	r := schemas.Rule(expr, id)
	r.Why = why
	return r
}
