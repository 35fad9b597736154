package vast

import "github.com/gpuprice/gpuprice/schemas"

// naming is what the canonicaliser assumes of Vast.ai's GPU names, which are
// nvidia-smi device names.
var naming = schemas.Naming{
	Assumptions: map[string]schemas.Assumption{
		"h200": {
			Form: schemas.FormSXM,
			Why:  "Vast.ai uses nvidia-smi names: bare \"H200\" is the SXM part, the NVL card is \"H200 NVL\"",
		},
	},
}
