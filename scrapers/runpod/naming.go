package runpod

import "github.com/gpuprice/gpuprice/schemas"

// naming is what the canonicaliser assumes of RunPod's GPU names, which are nvidia-smi
// device names.
var naming = schemas.Naming{
	Assumptions: map[string]schemas.Assumption{
		"h200": {
			Form: schemas.FormSXM,
			Why:  "RunPod uses nvidia-smi names: bare \"NVIDIA H200\" is the SXM part (shown as \"H200 SXM\")",
		},
	},
}
