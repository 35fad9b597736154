package lambda

import "github.com/gpuprice/gpuprice/schemas"

// naming is what the canonicaliser assumes of Lambda's GPU names.
var naming = schemas.Naming{
	Assumptions: map[string]schemas.Assumption{
		"gh200": {MemoryGB: 96, Why: "Lambda sells GH200 only with 96 GB"},
	},
}
