package aws

import (
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// awsEFASizes are the EC2 GPU instance sizes that support the Elastic Fabric
// Adapter, from the "Supported instance types" list of the EC2 user guide's EFA
// page (docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html): the largest p3dn,
// p4d/p4de, p5/p5e/p5en and p6 sizes, and the 8xlarge-and-up g4dn, g5, g6, g6e and
// gr6 sizes. Other multi-GPU sizes (p3.8xlarge, p3.16xlarge, g5.12xlarge…) reach
// other instances over ENA (Ethernet) only. See docs/analytics.md, "MFU".
var awsEFASizes = map[string]map[string]bool{
	"p3dn":      {"24xlarge": true},
	"p4d":       {"24xlarge": true},
	"p4de":      {"24xlarge": true},
	"p5":        {"48xlarge": true},
	"p5e":       {"48xlarge": true},
	"p5en":      {"48xlarge": true},
	"p6-b200":   {"48xlarge": true},
	"p6-b300":   {"48xlarge": true},
	"p6e-gb200": {"36xlarge": true},
	"g4dn":      {"8xlarge": true, "12xlarge": true, "16xlarge": true, "metal": true},
	"g5":        {"8xlarge": true, "12xlarge": true, "16xlarge": true, "24xlarge": true, "48xlarge": true},
	"g6":        {"8xlarge": true, "12xlarge": true, "16xlarge": true, "24xlarge": true, "48xlarge": true},
	"g6e":       {"8xlarge": true, "12xlarge": true, "16xlarge": true, "24xlarge": true, "48xlarge": true},
	"gr6":       {"8xlarge": true},
}

// interconnect is the interconnect of an EC2 instance type (a SKU such as
// "p5.48xlarge" or "p4d.24xlarge:all-upfront"): EFA for the sizes that have it,
// Ethernet (ENA) for other multi-GPU sizes, unknown for a single GPU, which talks
// to no other.
func interconnect(sku string, gpuCount float64) string {
	sku, _, _ = strings.Cut(strings.ToLower(strings.TrimSpace(sku)), ":")
	family, size, ok := strings.Cut(sku, ".")
	if ok && awsEFASizes[family][size] {
		return schemas.InterconnectEFA
	}
	if gpuCount > 1 {
		return schemas.InterconnectEthernet
	}
	return schemas.InterconnectUnknown
}
