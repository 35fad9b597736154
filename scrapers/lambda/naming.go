package lambda

import "github.com/gpuprice/gpuprice/schemas"

// naming is what the canonicaliser assumes of Lambda's GPU names. The pricing page
// prints the form factor for most plans ("NVIDIA H100 SXM", "NVIDIA A100 PCIe") but
// not for the Tesla V100, whose rows stay unknown with the reason
// (docs/gpu-catalog.md).
var naming = schemas.Naming{
	Rules: []schemas.SKURule{
		schemas.SourcedRule(
			`^gpu_[0-9]+x_v100(_|$)`,
			schemas.UnknownGPU,
			"lambda rule: stays unknown: Lambda's pricing page names \"NVIDIA Tesla V100\" 16 GB "+
				"(lambda.ai/service/gpu-cloud, 8x tab) and its instance-types API \"Tesla V100 (16 GB)\" (as public API clients "+
				"quote it), with no form factor; Lambda's Hyperplane-8 server has NVLinked V100s "+
				"(lambdalabs.com/blog/announcing-hyperplane-16), but Lambda does not say its cloud instances run on it; SXM2 "+
				"(125 dense FP16) and PCIe (112) both exist and no Lambda statement of either was found (what was searched: "+
				"docs/gpu-catalog.md)",
		),
	},
	Assumptions: map[string]schemas.Assumption{
		"gh200": {MemoryGB: 96, Why: "Lambda sells GH200 only with 96 GB"},
	},
}
