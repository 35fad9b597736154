package aws

import (
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

// TestInterconnectRegistered checks that the EFA rule reaches the shared layers
// through the provider's registered facts: EFA only on the sizes AWS lists for it,
// Ethernet on other multi-GPU sizes, unknown on one GPU, nothing for a provider
// without a rule.
func TestInterconnectRegistered(t *testing.T) {
	for _, c := range []struct {
		provider, sku string
		gpus          float64
		want          string
	}{
		{"aws", "p5.48xlarge", 8, schemas.InterconnectEFA},
		{"aws", "P4D.24xlarge:all-upfront", 8, schemas.InterconnectEFA},
		{"aws", "g5.12xlarge", 4, schemas.InterconnectEFA},
		{"aws", "p3dn.24xlarge", 8, schemas.InterconnectEFA},
		{"aws", "g4dn.12xlarge", 4, schemas.InterconnectEFA},
		{"aws", "g6.12xlarge", 4, schemas.InterconnectEFA},
		{"aws", "p3.16xlarge", 8, schemas.InterconnectEthernet},
		{"aws", "p3.8xlarge", 4, schemas.InterconnectEthernet},
		{"aws", "g4dn.xlarge", 1, schemas.InterconnectUnknown},
		{"aws", "g5.4xlarge", 1, schemas.InterconnectUnknown},
		{"lambda", "gpu_8x_h100_sxm5", 8, ""},
	} {
		if got := schemas.SKUInterconnect(c.provider, c.sku, c.gpus); got != c.want {
			t.Errorf("SKUInterconnect(%s, %s, %g) = %q, want %q", c.provider, c.sku, c.gpus, got, c.want)
		}
	}
}
