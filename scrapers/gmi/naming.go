package gmi

import "github.com/gpuprice/gpuprice/schemas"

// naming is what the canonicaliser assumes of GMI Cloud's GPU names: its H100 and H200
// are HGX (SXM) servers.
var naming = schemas.Naming{
	Assumptions: map[string]schemas.Assumption{
		"h100": {Form: schemas.FormSXM, Why: "GMI Cloud sells H100 only in HGX servers"},
		"h200": {Form: schemas.FormSXM, Why: "GMI Cloud sells H200 only in HGX servers"},
	},
}
